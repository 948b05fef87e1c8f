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
import { CATALOGUE_STATEMENT, catalogueOf, dayBefore, edgeOf, edgeStatement, outsideStatement, rangeRows, type RawRow, type Segment } from "./edges.ts";
import { emptyEdge, type Catalogue, type Edge, type EdgeStore } from "./edge-store.ts";
import type { ProductCostRow } from "../answer-rows.ts";
import type { Statement } from "../read.ts";
import type { ProductCostQuery } from "../../query/product-cost-params.ts";
import type { Sql } from "../../database/client.ts";

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
