// The read behind GET /external/v1/product-costs (read.ts: in batches, its slot, deadlines
// and cancellation owned by one read).
// For exactly one calendar month, quarter or year in JSON, the answer the last refresh
// rendered (sql/queries/product_costs_rendered.sql) when the change log says it still holds;
// otherwise, and for every other range, the rows of sql/queries/product_costs.sql.

import lockDailyRead from "../../sql/queries/lock_daily_read.sql" with { type: "text" };
import lockRollupRead from "../../sql/queries/lock_rollup_read.sql" with { type: "text" };
import productCostsQuery from "../../sql/queries/product_costs.sql" with { type: "text" };
import dailyQuery from "../../sql/queries/product_costs_daily.sql" with { type: "text" };
import oneDayQuery from "../../sql/queries/product_costs_one_day.sql" with { type: "text" };
import renderedQuery from "../../sql/queries/product_costs_rendered.sql" with { type: "text" };
import { answerVersionStatement, type AnswerVersion, versionOf } from "./answer-version.ts";
import { calendarPeriodOf } from "./calendar-period.ts";
import type { Sql } from "./client.ts";
import type { ProductCostQuery } from "../validation/product-cost-params.ts";
import { openRead, type Read, type ReadOptions, type Snapshot, type Statement } from "./read.ts";

/**
 * One row of the answer as PostgreSQL sends it: each column's text in UTF-8, undecoded
 * (null for SQL NULL), in the order of PRODUCT_COST_COLUMNS. The encoders write these bytes
 * as they are (row-json.ts, row-csv.ts): decoding 50,000 rows into strings only to encode
 * them again was the largest share of the service's own time.
 */
export type ProductCostRow = readonly (Uint8Array | null)[];

/** The answer's fields, in the order of the statements' columns and of the JSON and CSV output. */
export const PRODUCT_COST_COLUMNS = [
  "erp_product_id",
  "erp_sku",
  "product_name",
  "purchase_cost_usd",
  "inbound_freight_usd",
  "shipping_to_customer_usd",
  "warehouse_fees_usd",
] as const;

/**
 * A chunk of a rendered answer as PostgreSQL sends it, never decoded: [rows, body], the
 * number of row objects (as decimal text) and their JSON text separated by commas (UTF-8).
 */
export type RenderedChunk = [rows: Uint8Array, body: Uint8Array];

/**
 * What a read returns: rows to render, or the chunks of an answer rendered by the refresh; and,
 * from the rollup, the version of the answers at the snapshot the rows were read in (none
 * from the daily rows).
 */
export type ProductCostRead = ({ kind: "rows"; read: Read<ProductCostRow> } | { kind: "rendered"; read: Read<RenderedChunk> }) & { version?: AnswerVersion };


export interface ProductCostReadOptions extends ReadOptions {
  batchSize: number;
  /** A JSON answer is wanted: an exact calendar period may be served as rendered by the refresh. */
  rendered?: boolean;
  /** Read the daily rows directly, not the rollup (read-source.ts). */
  daily?: boolean;
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

/** The SQL that returns the rows of `q`, and its parameters. */
export function productCostsStatement(q: ProductCostQuery): Statement {
  // One day is its daily rows as they are: a plainer statement, a third faster than the general one.
  if (q.monthFrom === q.monthTo) return { text: oneDayQuery, params: [q.monthFrom, q.segment] };
  return { text: productCostsQuery, params: [q.monthFrom, q.monthTo, q.segment] };
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
    productCostsStatement({ monthFrom: "0001-01-01", monthTo: "0001-01-01", segment: "all" }), // one day
    productCostsStatement({ monthFrom: "0001-01-15", monthTo: "0001-03-10", segment: "all" }), // days and months
    productCostsStatement(month),
    renderedAnswerStatement(month)!,
  ];
}

// A rendered chunk holds 2,000 rows: a few of them a fetch.
const RENDERED_CHUNKS_PER_BATCH = 2;

export async function readProductCosts(sql: Sql, q: ProductCostQuery, options: ProductCostReadOptions): Promise<ProductCostRead> {
  if (options.daily) {
    const snapshot: Snapshot = { lock: lockDailyRead };
    return { kind: "rows", read: await openRead<ProductCostRow>(sql, [{ statement: dailyCostsStatement(q), batchSize: options.batchSize }], options, snapshot) };
  }
  // The version first, in the rows' snapshot: it names exactly the state they are read at.
  const snapshot: Snapshot = { lock: lockRollupRead, head: answerVersionStatement(q.monthFrom, q.monthTo) };
  const rows = { statement: productCostsStatement(q), batchSize: options.batchSize };
  const rendered = options.rendered ? renderedAnswerStatement(q) : undefined;
  // The rendered answer when the refresh left one the change log still trusts (it has rows), else the rows.
  const read = await openRead<ProductCostRow | RenderedChunk>(sql, rendered ? [{ statement: rendered, batchSize: RENDERED_CHUNKS_PER_BATCH }, rows] : [rows], options, snapshot);
  const version = versionOf(read.head!);
  return rendered && read.answered === 0 ? { kind: "rendered", read: read as Read<RenderedChunk>, version } : { kind: "rows", read: read as Read<ProductCostRow>, version };
}
