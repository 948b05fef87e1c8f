// A range from two edges (issue 53's design, docs/performance.md "Computed ranges"): every
// product's totals through the range's last day (an edge: sql/queries/product_costs_edge.sql),
// less its totals through the day before the first, plus the range's days outside the window of
// months (sql/queries/product_costs_outside.sql); the rows then in the catalogue's order
// (sql/queries/product_catalogue.sql). Exact in micro-units at any size (micro-units.ts).
// Read only while the rollup is readable as such: a window recorded and no note of everything
// waiting (range_facts.sql; else the daily rows). What is held between reads: edge-store.ts.

import catalogueSql from "../../../sql/queries/product_catalogue.sql" with { type: "text" };
import edgeSql from "../../../sql/queries/product_costs_edge.sql" with { type: "text" };
import outsideSql from "../../../sql/queries/product_costs_outside.sql" with { type: "text" };
import { decimalBytes, difference, microOf, total, type Micro } from "./micro-units.ts";
import { AMOUNTS, emptyEdge, type Catalogue, type Edge, type ProductSlots } from "./edge-store.ts";
import type { ProductCostRow } from "../answer-rows.ts";
import type { Statement } from "../read.ts";

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

/** A non-negative count's decimal text (ASCII, from `start` to `end`) as a number. */
function countOf(text: Uint8Array, start: number, end: number): number {
  let x = 0;
  for (let i = start; i < end; i++) x = x * 10 + (text[i]! - 0x30);
  return x;
}

/**
 * Where each element of an array's text of numbers ("{1,-2.5,3}": no quotes, no nulls, no
 * nesting) starts and ends: [start, end] per element.
 */
function elementsOf(text: Uint8Array): Int32Array {
  let count = text.length > 2 ? 1 : 0;
  for (let i = 1; i < text.length - 1; i++) if (text[i] === 0x2c) count++;
  const at = new Int32Array(count * 2);
  let start = 1;
  let e = 0;
  for (let i = 1; i < text.length; i++) {
    if (text[i] !== 0x2c && i !== text.length - 1) continue;
    if (i > start) {
      at[e++] = start;
      at[e++] = i;
    }
    start = i + 1;
  }
  return at;
}

/**
 * The totals in the one row of the edge or outside statement (arrays by position: product_id,
 * n, then per amount its sum and how many values it has), by slot. Null arrays: nothing.
 */
export function edgeOf(row: RawRow, slots: ProductSlots): Edge {
  const ids = row[0];
  if (!ids) return emptyEdge(0);
  const idAt = elementsOf(ids);
  const products = idAt.length / 2;
  const at = new Int32Array(products);
  for (let i = 0; i < products; i++) at[i] = slots.of(ids, idAt[2 * i]!, idAt[2 * i + 1]!);
  const edge = emptyEdge(slots.size);
  const column = (c: number) => {
    const text = row[c]!;
    const where = elementsOf(text);
    if (where.length !== idAt.length) throw new Error(`an edge's arrays differ in length: ${where.length / 2} values of column ${c} for ${products} products`);
    return { text, where };
  };
  const n = column(1);
  for (let i = 0; i < products; i++) edge.n[at[i]!] = countOf(n.text, n.where[2 * i]!, n.where[2 * i + 1]!);
  for (let c = 0; c < AMOUNTS; c++) {
    const sums = column(2 + 2 * c);
    const counts = column(3 + 2 * c);
    for (let i = 0; i < products; i++) {
      const k = at[i]! * AMOUNTS + c;
      const sum = microOf(sums.text, sums.where[2 * i]!, sums.where[2 * i + 1]!);
      if (typeof sum === "number") edge.sums[k] = sum;
      else {
        edge.sums[k] = NaN;
        edge.big.set(k, sum);
      }
      edge.counts[k] = countOf(counts.text, counts.where[2 * i]!, counts.where[2 * i + 1]!);
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
    slotOf[i] = slots.of(r[0]!);
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
      // A copy, not a view: Bun makes a small array several times faster than a view of a large one.
      row[c] = start < 0 ? null : catalogue.text.slice(start, catalogue.bounds[p * 6 + 2 * c + 1]!);
    }
    for (let c = 0; c < AMOUNTS; c++) {
      const count = countAt(through, s, c) - countAt(before, s, c) + countAt(outside, s, c);
      if (count <= 0) {
        row[3 + c] = null;
        continue;
      }
      row[3 + c] = decimalBytes(total(difference(sumAt(through, s, c), sumAt(before, s, c)), sumAt(outside, s, c)));
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
