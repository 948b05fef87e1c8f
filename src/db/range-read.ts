// A read of a range from the rollup as two edges (issue 53's design), in two steps within one
// snapshot: the head (sql/queries/range_facts.sql) says what the range needs and under which
// keys; the plan then asks the database only for what is not held (edge-store.ts): the range's
// days outside the window always (two index scans, usually empty), the catalogue and each edge
// when not held. The rows are then arithmetic over held and read totals (edges.ts).
//
// Not the service's read path: on today's rollup (wide month rows of numeric arrays) an edge
// not held costs about what today's whole statement (sql/queries/product_costs.sql) does, so a
// range with neither edge held read 1.2-2x slower than it (measured on the service at 50,000
// products: tests/bench/results/2026-12-02-edge-reads-50k.md). It becomes the read path with
// the narrow layouts that make an edge cheap (docs/performance.md, "Computed ranges").

import rangeFactsSql from "../../sql/queries/range_facts.sql" with { type: "text" };
import { CATALOGUE_STATEMENT, catalogueOf, dayBefore, edgeOf, edgeStatement, outsideStatement, rangeRows, type RawRow, type Segment } from "./edges.ts";
import { emptyEdge, type Catalogue, type Edge, type EdgeStore } from "./edge-store.ts";
import type { ProductCostRow } from "./product-costs.ts";
import type { Statement } from "./read.ts";
import type { ProductCostQuery } from "../validation/product-cost-params.ts";
import type { Sql } from "./client.ts";

/** The head of a read of `q` from the rollup: its first two columns are the answer's version (answer-version.ts). */
export function rangeFactsStatement(q: ProductCostQuery): Statement {
  return { text: rangeFactsSql, params: [q.monthFrom, q.monthTo] };
}

/** range_facts.sql's row, decoded. */
export interface RangeFacts {
  readable: boolean;
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
    throughVersion: text(6),
    beforeVersion: text(7),
    catalogueVersion: text(8),
  };
}

/** What a range's read needs: the held parts, and the statements that read the others (in `statements`' order). */
export interface EdgesPlan {
  statements: Statement[];
  assemble(results: readonly (readonly RawRow[])[], batchSize: number): Generator<ProductCostRow[]>;
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
  const edge = (day: string | null, version: string | null) => {
    if (day === null || version === null) return { held: emptyEdge(0) }; // before the window: nothing
    const key = `${facts.window}|${day}|${version}`;
    const held = store.edge(key);
    if (held) return { held };
    statements.push(edgeStatement(day));
    return { key, at: statements.length - 1 };
  };
  const through = edge(q.monthTo, facts.throughVersion);
  const before = edge(dayBefore(q.monthFrom), facts.beforeVersion);
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
 * not read as edges now (no window yet, or a note of everything waiting). For tests and
 * benchmarks.
 */
export async function rangeRowsIn(tx: Sql, q: ProductCostQuery, store: EdgeStore): Promise<ProductCostRow[] | null> {
  const head = rangeFactsStatement(q);
  const [row] = (await tx.unsafe(head.text, head.params).raw()) as unknown as RawRow[];
  const facts = factsOf(row!);
  if (!facts.readable) return null;
  const plan = edgesPlan(q, facts, store);
  const results: RawRow[][] = [];
  for (const s of plan.statements) results.push((await tx.unsafe(s.text, s.params).raw()) as unknown as RawRow[]);
  return [...plan.assemble(results, 2000)].flat();
}
