// A range from two edges (issue 53's design, docs/performance.md "Computed ranges"): every
// product's totals through the range's last day (an edge: sql/queries/product_costs_edge.sql),
// less its totals through the day before the first, plus the range's days outside the window of
// months (sql/queries/product_costs_outside.sql); the rows then in the catalogue's order
// (sql/queries/product_catalogue.sql). Exact in micro-units at any size (src/http/micro-units.ts).
// Read only while the rollup is readable as such: a window recorded and no note of everything
// waiting (range_facts.sql; else the daily rows). What is held between reads: edge-store.ts.

import catalogueSql from "../../sql/queries/product_catalogue.sql" with { type: "text" };
import edgeSql from "../../sql/queries/product_costs_edge.sql" with { type: "text" };
import outsideSql from "../../sql/queries/product_costs_outside.sql" with { type: "text" };
import { decimalText, difference, microOf, total, type Micro } from "../http/micro-units.ts";
import { AMOUNTS, emptyEdge, type Catalogue, type Edge, type ProductSlots } from "./edge-store.ts";
import type { ProductCostRow } from "./product-costs.ts";
import type { Statement } from "./read.ts";

/** A row as PostgreSQL sends it: each column's bytes (null for SQL NULL). */
export type RawRow = readonly (Uint8Array | null)[];

/** The statement of the edge through `day`. */
export function edgeStatement(day: string): Statement {
  return { text: edgeSql, params: [day] };
}

/** The statement of the range's days outside the window. */
export function outsideStatement(from: string, to: string): Statement {
  return { text: outsideSql, params: [from, to] };
}

export const CATALOGUE_STATEMENT: Statement = { text: catalogueSql, params: [] };

const latin1 = new TextDecoder("latin1");

/**
 * The totals of the edge or outside statement's rows (product_id, n, then per amount its sum and
 * how many values it has), by slot.
 */
export function edgeOf(rows: readonly RawRow[], slots: ProductSlots): Edge {
  const at = new Int32Array(rows.length);
  for (let i = 0; i < rows.length; i++) at[i] = slots.of(latin1.decode(rows[i]![0]!));
  const edge = emptyEdge(slots.size);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const s = at[i]!;
    edge.n[s] = Number(latin1.decode(r[1]!));
    for (let c = 0; c < AMOUNTS; c++) {
      const sum = microOf(r[2 + 2 * c]!);
      if (typeof sum === "number") edge.sums[s * AMOUNTS + c] = sum;
      else {
        edge.sums[s * AMOUNTS + c] = NaN;
        edge.big.set(s * AMOUNTS + c, sum);
      }
      edge.counts[s * AMOUNTS + c] = Number(latin1.decode(r[3 + 2 * c]!));
    }
  }
  return edge;
}

/** The catalogue statement's rows (product_id, erp_product_id, erp_sku, product_name, is_sample), in their order. */
export function catalogueOf(rows: readonly RawRow[], slots: ProductSlots): Catalogue {
  const length = rows.length;
  let size = 0;
  for (const r of rows) size += (r[1]?.length ?? 0) + (r[2]?.length ?? 0) + (r[3]?.length ?? 0);
  const text = new Uint8Array(size);
  const bounds = new Int32Array(length * 6);
  const slotOf = new Int32Array(length);
  const sample = new Uint8Array(length);
  let end = 0;
  for (let i = 0; i < length; i++) {
    const r = rows[i]!;
    slotOf[i] = slots.of(latin1.decode(r[0]!));
    sample[i] = r[4]![0] === 0x74 ? 1 : 0; // 't'
    for (let c = 0; c < 3; c++) {
      const cell = r[1 + c];
      if (!cell) {
        bounds[i * 6 + 2 * c] = -1;
        continue;
      }
      text.set(cell, end);
      bounds[i * 6 + 2 * c] = end;
      bounds[i * 6 + 2 * c + 1] = end += cell.length;
    }
  }
  return { length, slots: slotOf, sample, text, bounds };
}

function sumAt(edge: Edge, s: number, c: number): Micro {
  if (s >= edge.length) return 0;
  const x = edge.sums[s * AMOUNTS + c]!;
  return Number.isNaN(x) ? edge.big.get(s * AMOUNTS + c)! : x;
}

const countAt = (edge: Edge, s: number, c: number) => (s < edge.length ? edge.counts[s * AMOUNTS + c]! : 0);
const rowsAt = (edge: Edge, s: number) => (s < edge.length ? edge.n[s]! : 0);

const ascii = (text: string) => Buffer.from(text, "latin1");

export type Segment = "all" | "normal" | "sample";

/**
 * The answer's rows, `batchSize` at a time, in the catalogue's order: each product of `segment`
 * with a daily row in the range (through − before + outside), its three text cells and its
 * amounts (null where it has no value).
 */
export function* rangeRows(catalogue: Catalogue, through: Edge, before: Edge, outside: Edge, segment: Segment, batchSize: number): Generator<ProductCostRow[]> {
  const wanted = segment === "all" ? -1 : segment === "sample" ? 1 : 0;
  let batch: ProductCostRow[] = [];
  for (let p = 0; p < catalogue.length; p++) {
    if (wanted >= 0 && catalogue.sample[p] !== wanted) continue;
    const s = catalogue.slots[p]!;
    if (rowsAt(through, s) - rowsAt(before, s) + rowsAt(outside, s) <= 0) continue;
    const row: (Uint8Array | null)[] = new Array(7);
    for (let c = 0; c < 3; c++) {
      const start = catalogue.bounds[p * 6 + 2 * c]!;
      row[c] = start < 0 ? null : catalogue.text.subarray(start, catalogue.bounds[p * 6 + 2 * c + 1]!);
    }
    for (let c = 0; c < AMOUNTS; c++) {
      const count = countAt(through, s, c) - countAt(before, s, c) + countAt(outside, s, c);
      row[3 + c] = count > 0 ? ascii(decimalText(total(difference(sumAt(through, s, c), sumAt(before, s, c)), sumAt(outside, s, c)))) : null;
    }
    batch.push(row);
    if (batch.length === batchSize) {
      yield batch;
      batch = [];
    }
  }
  yield batch;
}

/** The day before `day` (YYYY-MM-DD, years 0001 to 9999), or null before 0001-01-01. */
export function dayBefore(day: string): string | null {
  if (day === "0001-01-01") return null;
  const d = new Date(0);
  d.setUTCFullYear(Number(day.slice(0, 4)), Number(day.slice(5, 7)) - 1, Number(day.slice(8, 10)) - 1);
  return `${String(d.getUTCFullYear()).padStart(4, "0")}-${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")}`;
}
