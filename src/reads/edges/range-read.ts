// A read of a range from the rollup as two edges (issue 53's design), in two steps within one
// snapshot: the head (sql/queries/range_facts.sql) says what the range needs and under which
// keys; the plan then asks the database only for what is not held (edge-store.ts): the range's
// days outside the window always (two index scans, usually empty), the catalogue and each edge
// when not held. The rows are then arithmetic over held and read totals (edges.ts).
//
// Used only where it is the cheaper read: on today's rollup (wide month rows of numeric arrays)
// an edge not held costs about three quarters of what the range's one statement
// (sql/queries/product_costs.sql) does, the catalogue a third, so a range with two parts to read
// read 1.2-2x slower than that statement (tests/bench/results/2026-12-02-edge-reads-50k.md), and
// at 200,000 products even one part read in the request made it slower than the statement
// (tests/bench/results/2026-12-02-edges-held-200k.md). So only a range with nothing to read but
// its days outside the window is read as edges (edgesAreCheaper); any other is read by the
// statement, and what it lacked is read in the background when the service is idle
// (edge-warmer.ts), for the next range that shares it.

import rangeFactsSql from "../../../sql/queries/range_facts.sql" with { type: "text" };
import { AMOUNTS, emptyEdge, type Catalogue, type Edge, type EdgeStore, type ProductSlots } from "./edge-store.ts";
import type { ProductCostRow } from "../answer-rows.ts";
import type { Statement } from "../read.ts";
import type { ProductCostQuery } from "../../query/product-cost-params.ts";
import type { Sql } from "../../database/client.ts";
import catalogueSql from "../../../sql/queries/product_catalogue.sql" with { type: "text" };
import edgeSql from "../../../sql/queries/product_costs_edge.sql" with { type: "text" };
import outsideSql from "../../../sql/queries/product_costs_outside.sql" with { type: "text" };
import { decimalBytes, difference, microOf, total, type Micro } from "./micro-units.ts";
import lockRollupRead from "../../../sql/queries/lock_rollup_read.sql" with { type: "text" };

/** The head of a read of `q` from the rollup: its first two columns are the answer's version (answer-version.ts). */
export function rangeFactsStatement(q: ProductCostQuery): Statement {
  return { text: rangeFactsSql, params: [q.monthFrom, q.monthTo] };
}

/** range_facts.sql's row, decoded. */
export interface RangeFacts {
  readable: boolean;
  /** Whether the keys below were computed (readable, and few notes waiting): else the range is read by its statement. */
  edges: boolean;
  /** Key of the window's shape: an edge read under another is another edge. */
  window: string;
  throughVersion: string | null;
  beforeVersion: string | null;
  catalogueVersion: string | null;
}

export function factsOf(head: readonly (Uint8Array | null)[]): RangeFacts {
  const text = (i: number) => (head[i] ? Buffer.from(head[i]!).toString() : null);
  return {
    readable: text(2) === "true",
    window: `${text(3)}|${text(4)}|${text(5)}`,
    edges: text(6) === "true",
    throughVersion: text(7),
    beforeVersion: text(8),
    catalogueVersion: text(9),
  };
}

/** What a range's read needs: the held parts, and the statements that read the others (in `statements`' order). */
export interface EdgesPlan {
  statements: Statement[];
  assemble(results: readonly (readonly RawRow[])[], batchSize: number): Generator<ProductCostRow[]>;
}

/** The key an edge through `day` is held under at the version `version` of [window_first, day]. */
function edgeKey(facts: RangeFacts, day: string, version: string): string {
  return `${facts.window}|${day}|${version}`;
}

/** The edges a range needs: through its last day, and through the day before its first (null: before the window, nothing). */
function edgesOf(q: ProductCostQuery, facts: RangeFacts): { day: string | null; version: string | null }[] {
  return [
    { day: q.monthTo, version: facts.throughVersion },
    { day: dayBefore(q.monthFrom), version: facts.beforeVersion },
  ];
}

/**
 * What a read of `q` as edges would read from the database besides its days outside the
 * window: the catalogue and each edge not held now (0 to 3). Asks without counting: the
 * store's hits and misses count reads that use it.
 */
export function partsToRead(q: ProductCostQuery, facts: RangeFacts, store: EdgeStore): number {
  const catalogue = store.holdsCatalogue(facts.catalogueVersion!) ? 0 : 1;
  return catalogue + edgesOf(q, facts).filter((e) => e.day !== null && e.version !== null && !store.holds(edgeKey(facts, e.day, e.version))).length;
}

/**
 * Whether `q` reads faster as edges than as its one statement: with nothing to read but its days
 * outside the window. One part to read (an edge) cost about the statement at 50,000 products and
 * more than it at 200,000 (month to date 1,408 ms against 859: tests/bench/results/2026-12-02-edges-held-200k.md).
 * Measured on the service at 50,000 products: both edges held 77-126 ms against the
 * statement's 333-620; an edge costs about three quarters of the statement, the catalogue a
 * third, so two parts or more cost more than the statement (docs/performance.md).
 */
export function edgesAreCheaper(q: ProductCostQuery, facts: RangeFacts, store: EdgeStore): boolean {
  return facts.edges && store.limitBytes > 0 && partsToRead(q, facts, store) === 0;
}

/**
 * The plan of a range whose rollup is readable (facts.readable): held parts taken from `store`
 * now, and what is read kept in it once read.
 */
export function edgesPlan(q: ProductCostQuery, facts: RangeFacts, store: EdgeStore): EdgesPlan {
  const catalogueKey = facts.catalogueVersion!;
  let catalogue = store.catalogue(catalogueKey);
  if (!catalogue) store.compactIfSparse(); // before any edge is taken: its slots may be given up
  const slots = store.slots; // what this read's numbers mean, whatever happens to the store meanwhile
  const statements: Statement[] = [outsideStatement(q.monthFrom, q.monthTo)];
  if (!catalogue) statements.push(CATALOGUE_STATEMENT);
  const edge = ({ day, version }: { day: string | null; version: string | null }) => {
    if (day === null || version === null) return { held: emptyEdge(0) }; // before the window: nothing
    const key = edgeKey(facts, day, version);
    const held = store.edge(key);
    if (held) return { held };
    statements.push(edgeStatement(day));
    return { key, at: statements.length - 1 };
  };
  const [through, before] = edgesOf(q, facts).map(edge) as [ReturnType<typeof edge>, ReturnType<typeof edge>];
  return {
    statements,
    assemble(results, batchSize) {
      // The catalogue first: the slots the edges are read into are the ones it uses.
      if (!catalogue) store.keepCatalogue(catalogueKey, (catalogue = catalogueOf(results[1]!, slots)), slots);
      const read = (part: { held?: Edge; key?: string; at?: number }): Edge => {
        if (part.held) return part.held;
        const e = edgeOf(results[part.at!]![0]!, slots);
        store.keepEdge(part.key!, e, slots);
        return e;
      };
      const t = read(through);
      const b = read(before);
      const outside = edgeOf(results[0]![0]!, slots);
      return rangeRows(catalogue as Catalogue, t, b, outside, q.segment as Segment, batchSize);
    },
  };
}

/**
 * The rows of `q` read as two edges in the caller's transaction `tx` (REPEATABLE READ: one
 * snapshot), with `store` holding what it holds from earlier reads; null when the rollup does
 * not read as edges now (no window yet, a note of everything or many notes waiting). For tests
 * and benchmarks.
 */
export async function rangeRowsIn(tx: Sql, q: ProductCostQuery, store: EdgeStore): Promise<ProductCostRow[] | null> {
  const head = rangeFactsStatement(q);
  const [row] = (await tx.unsafe(head.text, head.params).raw()) as unknown as RawRow[];
  const facts = factsOf(row!);
  if (!facts.edges) return null;
  const plan = edgesPlan(q, facts, store);
  const results: RawRow[][] = [];
  for (const s of plan.statements) results.push((await tx.unsafe(s.text, s.params).raw()) as unknown as RawRow[]);
  return [...plan.assemble(results, 2000)].flat();
}

/**
 * Reads into `store` what a read of `q` as edges would read (the catalogue and the edges not
 * held), in the caller's transaction `tx` (REPEATABLE READ, the rollup's tables locked as a
 * read locks them), under the keys of that snapshot: what a later read finds is exact for
 * whatever snapshot names the same keys. False when the rollup does not read as edges now (no
 * window, a note of everything, or many notes waiting).
 */
export async function keepPartsIn(tx: Sql, q: ProductCostQuery, store: EdgeStore): Promise<boolean> {
  const head = rangeFactsStatement(q);
  const [row] = (await tx.unsafe(head.text, head.params, { prepare: true }).raw()) as unknown as RawRow[];
  const facts = factsOf(row!);
  if (!facts.edges || partsToRead(q, facts, store) === 0) return facts.edges;
  const plan = edgesPlan(q, facts, store);
  const results: RawRow[][] = [];
  for (const s of plan.statements) results.push((await tx.unsafe(s.text, s.params, { prepare: true }).raw()) as unknown as RawRow[]);
  plan.assemble(results, 2000); // keeps what it read; the rows, never asked for, are never made
  return true;
}

// A range from two edges (issue 53's design, docs/performance.md "Computed ranges"): every
// product's totals through the range's last day (an edge: sql/queries/product_costs_edge.sql),
// less its totals through the day before the first, plus the range's days outside the window of
// months (sql/queries/product_costs_outside.sql); the rows then in the catalogue's order
// (sql/queries/product_catalogue.sql). Exact in micro-units at any size (micro-units.ts).
// Read only while the rollup is readable as such: a window recorded and no note of everything
// waiting (range_facts.sql; else the daily rows). What is held between reads: edge-store.ts.

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

// Reads in the background what a range's read lacked, so that the next range sharing its edges
// is read from memory (range-read.ts). A read with two parts or more to read (the catalogue, an
// edge) reads its range with the one statement instead, the cheaper for it, and offers the
// range here; the parts are then read once the service has no read running or waiting, one
// range at a time, in a slot of its own (admission: never more connections than the pool's),
// and kept in the edge store under the keys of the snapshot they were read in. The request that
// offered them never waits for this.
//
// Bounded: at most MAX_WAITING ranges wait (the newest offered replaces the oldest); an offer of
// a range already waiting changes nothing. A failure is logged at debug and forgotten: the
// parts are read again by whatever read next lacks them.

/** Ranges waiting to be read into the store, at most. */
const MAX_WAITING = 8;

/** How long the service must have been quiet before a range's parts are read. */
export const QUIET_MS = 250;

/** How often a warmer with ranges waiting looks whether the service is quiet. */
const POLL_MS = 25;

export interface EdgeWarmerOptions {
  sql: Sql;
  store: EdgeStore;
  /** Whether a read is running or waiting now, and how many reads have begun so far (admission's counts). */
  activity: () => { busy: boolean; begun: number };
  /** Runs `work` in an admission slot. */
  inSlot: <T>(work: () => Promise<T>) => Promise<T>;
  debug?: (msg: string, fields: Record<string, unknown>) => void;
}

export interface EdgeWarmer {
  /** Reads what a read of `q` as edges lacks, later, once the service is quiet. */
  offer(q: ProductCostQuery): void;
  /** Ranges waiting, and whether one is being read now: for tests. */
  pending(): number;
  /** Settles once nothing waits and nothing is being read: for tests. */
  settled(): Promise<void>;
}

export function createEdgeWarmer(options: EdgeWarmerOptions): EdgeWarmer {
  const waiting = new Map<string, ProductCostQuery>(); // by range, oldest first
  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onSettled: (() => void)[] = [];
  let lastBegun = -1;
  let quietSince = 0;

  /** Whether nothing has run, waited or begun for QUIET_MS, as seen from poll to poll. */
  const quiet = () => {
    const { busy, begun } = options.activity();
    const now = performance.now();
    if (busy || begun !== lastBegun) {
      lastBegun = begun;
      quietSince = now;
    }
    return !busy && now - quietSince >= QUIET_MS;
  };

  const schedule = () => {
    if (running || timer || waiting.size === 0) return;
    timer = setTimeout(tick, POLL_MS);
    timer.unref?.(); // never what keeps the process up
  };

  const tick = () => {
    timer = undefined;
    if (!quiet()) return schedule();
    const [key, q] = waiting.entries().next().value!;
    waiting.delete(key);
    running = true;
    void options
      .inSlot(() =>
        options.sql.begin("isolation level repeatable read read only", async (tx) => {
          await tx.unsafe(lockRollupRead);
          await keepPartsIn(tx as unknown as Sql, q, options.store);
        }),
      )
      .catch((err: unknown) => options.debug?.("edges not kept", { month_from: q.monthFrom, month_to: q.monthTo, error: String((err as Error)?.message ?? err) }))
      .finally(() => {
        running = false;
        schedule();
        if (!running && waiting.size === 0) {
          const waiters = onSettled;
          onSettled = [];
          waiters.forEach((w) => w());
        }
      });
  };

  return {
    offer(q) {
      if (options.store.limitBytes === 0) return;
      const key = `${q.monthFrom}|${q.monthTo}`; // the segment is the rows', not the edges'
      if (waiting.has(key)) return;
      if (waiting.size >= MAX_WAITING) waiting.delete(waiting.keys().next().value!);
      waiting.set(key, q);
      schedule();
    },
    pending: () => waiting.size + (running ? 1 : 0),
    settled: () => (waiting.size === 0 && !running ? Promise.resolve() : new Promise((resolve) => onSettled.push(resolve))),
  };
}
