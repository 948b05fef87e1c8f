// The read behind GET /external/v1/product-costs (read.ts: in batches, its slot, deadlines
// and cancellation owned by one read).
// For exactly one calendar month, quarter or year in JSON, the answer the last refresh
// rendered (sql/queries/product_costs_rendered.sql) when the change log says it still holds;
// otherwise, and for every other range, its rows: one day's from its daily rows; any other
// range's from two edges held by the service when that is the cheaper read
// (edges/range-read.ts), else from sql/queries/product_costs.sql (and its missing edges then
// read in the background: the edge warmer); from the daily rows while the rollup cannot be read
// as edges.

import lockDailyRead from "../../sql/queries/lock_daily_read.sql" with { type: "text" };
import lockRollupRead from "../../sql/queries/lock_rollup_read.sql" with { type: "text" };
import productCostsQuery from "../../sql/queries/product_costs.sql" with { type: "text" };
import dailyQuery from "../../sql/queries/product_costs_daily.sql" with { type: "text" };
import oneDayQuery from "../../sql/queries/product_costs_one_day.sql" with { type: "text" };
import renderedQuery from "../../sql/queries/product_costs_rendered.sql" with { type: "text" };
import answerVersionQuery from "../../sql/queries/answer_version.sql" with { type: "text" };
import { daysInMonth } from "../query/lax-date.ts";
import type { Sql } from "../database/client.ts";
import type { ProductCostQuery } from "../query/product-cost-params.ts";
import { openRead, readRow, type Attempt, type Gather, type Read, type ReadOptions, type Snapshot, type Statement } from "./read.ts";
import { CATALOGUE_STATEMENT, edgeStatement, edgesAreCheaper, edgesPlan, factsOf, outsideStatement, rangeFactsStatement, type EdgeWarmer, type EdgesPlan, type RangeFacts, type RawRow } from "./edges/range-read.ts";
import { EdgeStore } from "./edges/edge-store.ts";
import type { ProductCostRow, RenderedChunk } from "./answer-rows.ts";

/**
 * What a read returns: rows to render, or the chunks of an answer rendered by the refresh; and,
 * from the rollup, the version of the answers at the snapshot the rows were read in (none
 * from the daily rows).
 */
/** Where a read's rows come from: a rendered calendar period, two edges (held or read), the range's statement over the rollup, or the daily rows. */
export type ReadFrom = "rendered" | "edges" | "rollup" | "daily";

export type ProductCostRead = ({ kind: "rows"; read: Read<ProductCostRow> } | { kind: "rendered"; read: Read<RenderedChunk> }) & { version?: AnswerVersion; from: ReadFrom };

export interface ProductCostReadOptions extends ReadOptions {
  batchSize: number;
  /** A JSON answer is wanted: an exact calendar period may be served as rendered by the refresh. */
  rendered?: boolean;
  /** Read the daily rows directly, not the rollup (read-source.ts). */
  daily?: boolean;
  /** What the service holds between reads (EDGE_CACHE_MB); none: each read reads what it needs. */
  edges?: EdgeStore;
  /** Reads in the background what a range read by its statement lacked; none: nothing is. */
  warmer?: EdgeWarmer;
}

/** The SQL that returns the rows of `q` from the daily rows alone (read-source.ts): the contract's two tables, nothing else. */
export function dailyCostsStatement(q: ProductCostQuery): Statement {
  if (q.monthFrom === q.monthTo) return { text: oneDayQuery, params: [q.monthFrom, q.segment] };
  return { text: dailyQuery, params: [q.monthFrom, q.monthTo, q.segment] };
}

/** The statements of the daily rows' source, over ranges in year 1 (no costs there), for the readiness check. */
export function dailyProbes(): Statement[] {
  return [dailyCostsStatement({ monthFrom: "0001-01-01", monthTo: "0001-01-01", segment: "all" }), dailyCostsStatement({ monthFrom: "0001-01-15", monthTo: "0001-03-10", segment: "all" })];
}

/** The SQL that returns the rows of a range of several days as one statement (no edge held). */
function rangeStatement(q: ProductCostQuery): Statement {
  return { text: productCostsQuery, params: [q.monthFrom, q.monthTo, q.segment] };
}

/** The one statement that returns the rows of `q` from the rollup: one day's, or any range's. */
export function productCostsStatement(q: ProductCostQuery): Statement {
  return q.monthFrom === q.monthTo ? oneDayStatement(q) : rangeStatement(q);
}

/** The SQL that returns the rows of one day (`q` from and to the same day): its daily rows as they are, a plainer statement than any other. */
function oneDayStatement(q: ProductCostQuery): Statement {
  return { text: oneDayQuery, params: [q.monthFrom, q.segment] };
}

/** The SQL that returns the rendered answer of `q` when `q` is exactly one calendar period (else undefined). */
export function renderedAnswerStatement(q: ProductCostQuery): Statement | undefined {
  const period = calendarPeriodOf(q.monthFrom, q.monthTo);
  return period ? { text: renderedQuery, params: [period, q.monthFrom, q.segment] } : undefined;
}

/**
 * The statements a request may run, each over a range in year 1 (which holds no costs), for
 * the readiness check: they touch every relation and function the read path needs.
 */
export function readPathProbes(): Statement[] {
  const month = { monthFrom: "0001-01-01", monthTo: "0001-01-31", segment: "all" } as const;
  return [
    rangeFactsStatement({ monthFrom: "0001-01-15", monthTo: "0001-03-10", segment: "all" }),
    oneDayStatement({ monthFrom: "0001-01-01", monthTo: "0001-01-01", segment: "all" }),
    rangeStatement({ monthFrom: "0001-01-15", monthTo: "0001-03-10", segment: "all" }),
    edgeStatement("0001-01-31"),
    outsideStatement("0001-01-15", "0001-03-10"),
    { text: `select * from (${CATALOGUE_STATEMENT.text}) c limit 0`, params: [] },
    renderedAnswerStatement(month)!,
  ];
}

// A rendered chunk holds 2,000 rows: a few of them a fetch.
const RENDERED_CHUNKS_PER_BATCH = 2;

/**
 * What a read of `q` from the rollup tries, from its head: one day, its daily rows; a rollup not
 * readable as edges now (no window yet, or a note of everything waiting), the daily rows; else
 * the rendered answer of a calendar period (JSON) when the refresh left one the change log
 * trusts, and then the edges (range-read.ts) when they are the cheaper read, or the range's one
 * statement (`warm`: what the edges lacked is worth reading in the background).
 */
function rollupPlan(q: ProductCostQuery, facts: RangeFacts, options: ProductCostReadOptions, store: EdgeStore): { attempts: (Attempt | Gather)[]; rendered?: boolean; edges?: EdgesPlan; warm?: boolean } {
  const rows = (statement: Statement) => ({ attempts: [{ statement, batchSize: options.batchSize }] });
  if (q.monthFrom === q.monthTo) return rows(oneDayStatement(q));
  if (!facts.readable) return rows(dailyCostsStatement(q));
  const renderedStatement = options.rendered ? renderedAnswerStatement(q) : undefined;
  const rendered: Attempt[] = renderedStatement ? [{ statement: renderedStatement, batchSize: RENDERED_CHUNKS_PER_BATCH }] : [];
  // Many notes waiting: every edge they touch is to be read again after the refresh anyway.
  if (!facts.edges) return { attempts: [...rendered, { statement: rangeStatement(q), batchSize: options.batchSize }], rendered: rendered.length > 0 };
  if (!edgesAreCheaper(q, facts, store)) return { attempts: [...rendered, { statement: rangeStatement(q), batchSize: options.batchSize }], rendered: rendered.length > 0, warm: true };
  const edges = edgesPlan(q, facts, store);
  return { attempts: [...rendered, { gather: edges.statements }], rendered: rendered.length > 0, edges };
}

/** A store that holds nothing: each read reads what it needs. */
const HOLD_NOTHING = new EdgeStore(0);

export async function readProductCosts(sql: Sql, q: ProductCostQuery, options: ProductCostReadOptions): Promise<ProductCostRead> {
  if (options.daily) {
    const snapshot: Snapshot = { lock: lockDailyRead };
    return { kind: "rows", read: await openRead<ProductCostRow>(sql, [{ statement: dailyCostsStatement(q), batchSize: options.batchSize }], options, snapshot), from: "daily" };
  }
  const store = options.edges ?? HOLD_NOTHING;
  // One day, and any range when nothing is held between reads (EDGE_CACHE_MB=0): one
  // statement, sent with the version (one round trip), which is read first in the rows'
  // snapshot and so names exactly the state they are read at.
  if (q.monthFrom === q.monthTo || store.limitBytes === 0) {
    const snapshot: Snapshot = { lock: lockRollupRead, head: answerVersionStatement(q.monthFrom, q.monthTo) };
    const rows = { statement: productCostsStatement(q), batchSize: options.batchSize };
    const rendered = options.rendered ? renderedAnswerStatement(q) : undefined;
    const read = await openRead<ProductCostRow | RenderedChunk>(sql, rendered ? [{ statement: rendered, batchSize: RENDERED_CHUNKS_PER_BATCH }, rows] : [rows], options, snapshot);
    const version = versionOf(read.head!);
    return rendered && read.answered === 0 ? { kind: "rendered", read: read as Read<RenderedChunk>, version, from: "rendered" } : { kind: "rows", read: read as Read<ProductCostRow>, version, from: "rollup" };
  }
  // Else the head first (range_facts.sql: the version, and the keys of what the range needs),
  // and what to read chosen from it: one round trip more.
  const snapshot: Snapshot = { lock: lockRollupRead, head: rangeFactsStatement(q) };
  let plan: ReturnType<typeof rollupPlan> | undefined;
  const read = await openRead<ProductCostRow | RenderedChunk | RawRow[][]>(sql, (head) => (plan = rollupPlan(q, factsOf(head), options, store)).attempts, options, snapshot);
  const version = versionOf(read.head!);
  if (plan!.rendered && read.answered === 0) return { kind: "rendered", read: read as Read<RenderedChunk>, version, from: "rendered" };
  if (plan!.warm) options.warmer?.offer(q);
  if (!plan!.edges) return { kind: "rows", read: read as Read<ProductCostRow>, version, from: "rollup" };
  const results = read.first[0] as RawRow[][];
  return { kind: "rows", read: heldRows(read, plan!.edges!.assemble(results, options.batchSize)), version, from: "edges" };
}

/** The rows made from a read's gathered results, as a read (its database part has ended already). */
function heldRows(read: Read<unknown>, batches: Generator<ProductCostRow[]>): Read<ProductCostRow> {
  let closed: unknown;
  return {
    head: read.head,
    first: batches.next().value ?? [],
    answered: read.answered,
    retriedAfter: read.retriedAfter,
    async next() {
      if (closed) throw closed;
      const batch = batches.next();
      return batch.done ? undefined : batch.value;
    },
    async close(reason = new Error("the read was closed before its end")) {
      closed ??= reason;
      batches.return(undefined);
      await read.close(reason);
    },
  };
}

/**
 * The rows of `q` as a read of the rollup makes them (the one-day statement, the daily rows, the
 * edges or the range's statement: never the rendered answer), in the caller's transaction `tx` (REPEATABLE READ: one
 * snapshot), with `store` holding what it holds. For tests and benchmarks.
 */
export async function productCostRowsIn(tx: Sql, q: ProductCostQuery, store: EdgeStore = HOLD_NOTHING): Promise<ProductCostRow[]> {
  const head = rangeFactsStatement(q);
  const [row] = (await tx.unsafe(head.text, head.params).raw()) as unknown as RawRow[];
  const plan = rollupPlan(q, factsOf(row!), { batchSize: 2000, firstBatchTimeoutMs: 0 }, store);
  const attempt = plan.attempts.at(-1)!;
  if (!("gather" in attempt)) return (await tx.unsafe(attempt.statement.text, attempt.statement.params).raw()) as unknown as ProductCostRow[];
  const results: RawRow[][] = [];
  for (const s of attempt.gather) results.push((await tx.unsafe(s.text, s.params).raw()) as unknown as RawRow[]);
  return [...plan.edges!.assemble(results, 2000)].flat();
}

// The version of the answers for a range (sql/queries/answer_version.sql, migrations 0007, 0009):
// what an ETag names. It changes exactly when a committed write changes the range's days, a
// product's attributes or everything, never when a write touches only other days or a
// refresh only folds. Read alone (one statement, shared by the requests that arrive together)
// for the conditional requests and the answer cache; read again in the rows' own snapshot
// (product-costs.ts), which is the version a 200's ETag names and its body is kept under.

export interface AnswerVersion {
  /** Opaque; equal for two reads exactly when the answers (every segment) are the same. */
  version: string;
  /** When a write last changed what the range shows (ISO 8601, UTC, by the writer's clock); null when none is recorded. */
  changedAt: string | null;
}

/** The statement that reads the version of the answers for [firstDay, lastDay]. */
export function answerVersionStatement(firstDay: string, lastDay: string): Statement {
  return { text: answerVersionQuery, params: [firstDay, lastDay] };
}

/** The version of the answers for [firstDay, lastDay] (YYYY-MM-DD, inclusive), any segment. */
export async function readAnswerVersion(
  sql: Sql,
  firstDay: string,
  lastDay: string,
  options: ReadOptions = { firstBatchTimeoutMs: 30_000 },
): Promise<AnswerVersion> {
  return versionOf((await readRow(sql, answerVersionStatement(firstDay, lastDay), options))!);
}

/** The version in the row of answer_version.sql (its columns' bytes). */
export function versionOf(row: readonly (Buffer | null)[]): AnswerVersion {
  return { version: row[0]!.toString(), changedAt: row[1] ? row[1].toString() : null };
}

// Which inclusive date ranges are exactly one calendar month, quarter or year: their JSON
// answer is the one the refresh rendered (sql/queries/product_costs_rendered.sql) while the
// change log says it still holds.

export type CalendarPeriod = "month" | "quarter" | "year";

const PERIOD_MONTHS: readonly [CalendarPeriod, number][] = [
  ["month", 1],
  ["quarter", 3],
  ["year", 12],
];

/**
 * The calendar month, quarter or year that [from, to] (YYYY-MM-DD, valid dates) covers
 * exactly, or undefined. Plain integer arithmetic: JavaScript's Date maps years below 100
 * to 19xx, and these dates run from 0001 to 9999.
 */
export function calendarPeriodOf(from: string, to: string): CalendarPeriod | undefined {
  const year = Number(from.slice(0, 4));
  const month = Number(from.slice(5, 7));
  const [toYear, toMonth, toDay] = [Number(to.slice(0, 4)), Number(to.slice(5, 7)), Number(to.slice(8, 10))];
  if (from.slice(8, 10) !== "01" || toYear !== year) return undefined;
  for (const [period, months] of PERIOD_MONTHS) {
    // A period starts on a multiple of its length: January, April, July or October for a quarter.
    if ((month - 1) % months !== 0) continue;
    const lastMonth = month + months - 1;
    if (toMonth === lastMonth && toDay === daysInMonth(year, lastMonth)) return period;
  }
  return undefined;
}
