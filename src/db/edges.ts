// A range from two edges (issue 53's design, docs/performance.md "Computed ranges"): every
// product's totals through the range's last day (an edge: sql/queries/product_costs_edge.sql),
// less its totals through the day before the first, plus the range's days outside the window of
// months (sql/queries/product_costs_outside.sql). Exact in micro-units at any size
// (src/http/micro-units.ts). Read only while the rollup is readable as such: a window recorded
// and no note of everything waiting (else the daily rows, as product_costs.sql reads them).
// Not yet the read path's: the service holding edges under their versions is the next step.

import edgeSql from "../../sql/queries/product_costs_edge.sql" with { type: "text" };
import outsideSql from "../../sql/queries/product_costs_outside.sql" with { type: "text" };
import { difference, microOf, total, type Micro } from "../http/micro-units.ts";
import type { Statement } from "./read.ts";

/** A product's totals over some days: its daily rows, and per amount its sum in micro-units and how many values it has. */
export interface Totals {
  n: number;
  sums: Micro[]; // purchase, inbound freight, shipping, warehouse fees
  counts: number[];
}

/** Totals by product id (its decimal text). */
export type TotalsByProduct = Map<string, Totals>;

/** A row of the edge or outside statement: each column's text. */
export interface TotalsRow {
  product_id: string;
  n: string;
  pc: string;
  pcn: string;
  fr: string;
  frn: string;
  sh: string;
  shn: string;
  wf: string;
  wfn: string;
}

const encoder = new TextEncoder();

export function totalsOf(rows: readonly TotalsRow[]): TotalsByProduct {
  const out: TotalsByProduct = new Map();
  for (const r of rows) {
    out.set(r.product_id, {
      n: Number(r.n),
      sums: [r.pc, r.fr, r.sh, r.wf].map((s) => microOf(encoder.encode(s))),
      counts: [r.pcn, r.frn, r.shn, r.wfn].map(Number),
    });
  }
  return out;
}

/** through − before + outside, per product; only the products with a daily row in the range. */
export function rangeTotals(through: TotalsByProduct, before: TotalsByProduct, outside: TotalsByProduct): TotalsByProduct {
  const out: TotalsByProduct = new Map();
  const ids = new Set([...through.keys(), ...outside.keys()]);
  for (const id of ids) {
    const t = through.get(id);
    const b = before.get(id);
    const o = outside.get(id);
    const n = (t?.n ?? 0) - (b?.n ?? 0) + (o?.n ?? 0);
    if (n <= 0) continue;
    const sums = [0, 1, 2, 3].map((c) => total(difference(t?.sums[c] ?? 0, b?.sums[c] ?? 0), o?.sums[c] ?? 0));
    const counts = [0, 1, 2, 3].map((c) => (t?.counts[c] ?? 0) - (b?.counts[c] ?? 0) + (o?.counts[c] ?? 0));
    out.set(id, { n, sums, counts });
  }
  return out;
}

/** The day before `day` (YYYY-MM-DD, years 0001 to 9999), or null before 0001-01-01. */
export function dayBefore(day: string): string | null {
  if (day === "0001-01-01") return null;
  const d = new Date(0);
  d.setUTCFullYear(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)) - 1);
  return `${String(d.getUTCFullYear()).padStart(4, "0")}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")}`;
}

/** The statement of the edge through `day`. */
export function edgeStatement(day: string): Statement {
  return { text: edgeSql, params: [day] };
}

/** The statement of the range's days outside the window. */
export function outsideStatement(from: string, to: string): Statement {
  return { text: outsideSql, params: [from, to] };
}
