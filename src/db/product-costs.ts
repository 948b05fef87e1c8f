// The read behind GET /external/v1/product-costs, through a cursor so that a large answer
// never sits in memory whole; the first batch is fetched before the caller commits to a
// 200, so a dead database is still a clean 503.
// For exactly one calendar month, quarter or year in JSON, the answer the last refresh
// rendered (sql/queries/product_costs_rendered.sql) when the change log says it still holds;
// otherwise, and for every other range, the rows of sql/queries/product_costs.sql.

import productCostsQuery from "../../sql/queries/product_costs.sql" with { type: "text" };
import oneDayQuery from "../../sql/queries/product_costs_one_day.sql" with { type: "text" };
import renderedQuery from "../../sql/queries/product_costs_rendered.sql" with { type: "text" };
import { calendarPeriodOf } from "./calendar-period.ts";
import type { Sql } from "./client.ts";
import { DatabaseDeadlineError, isStaleConnection, isStrayCancel } from "./errors.ts";
import { identifyPeer } from "./not-postgresql.ts";
import type { SilenceWatch } from "./silence.ts";

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

export interface ProductCostQuery {
  monthFrom: string; // YYYY-MM-DD
  monthTo: string; // YYYY-MM-DD
  segment: "normal" | "sample" | "all";
}

/**
 * A chunk of a rendered answer as PostgreSQL sends it, never decoded: [rows, body], the
 * number of row objects (as decimal text) and their JSON text separated by commas (UTF-8).
 */
export type RenderedChunk = [rows: Uint8Array, body: Uint8Array];

export interface RowBatches<T = ProductCostRow> {
  /** The first batch, already fetched (may be empty). */
  first: T[];
  /** The remaining batches. Throws (never ends quietly) when the read was closed early. */
  rest(): AsyncGenerator<T[]>;
  /** True once the cursor is exhausted or closed: nothing holds a connection any more. */
  finished(): boolean;
  /**
   * Stops early: cancels the statement if the server is still computing a batch, closes the
   * cursor, frees the connection. `reason` is what a later or pending rest() throws. Safe to call twice.
   */
  close(reason?: unknown): Promise<void>;
}

/** What a read returns: rows to render, or the chunks of an answer rendered by the refresh. */
export type ProductCostRead = { kind: "rows"; batches: RowBatches<ProductCostRow> } | { kind: "rendered"; batches: RowBatches<RenderedChunk> };

export interface ReadOptions {
  batchSize: number;
  /** A JSON answer is wanted: an exact calendar period may be served as rendered by the refresh. */
  rendered?: boolean;
  /** Deadline for the first batch; past it the query is cancelled and DatabaseDeadlineError thrown. */
  firstBatchTimeoutMs: number;
  /** Deadline for getting a connection at all (postgres.js may wait for one for ever: see openOnce). */
  connectTimeoutMs?: number;
  /** Aborts the read (client gone, request deadline): the first batch rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * Tells a silent database from a slow one while a batch is awaited (silence.ts): past about
   * DB_CONNECT_TIMEOUT_MS of a silence the wait fails with DatabaseSilentError.
   */
  silence?: SilenceWatch;
}

/** A statement of the read; its rows come as arrays of the columns' bytes, undecoded (postgres.js raw()). */
export interface Statement {
  text: string;
  params: string[];
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

// How long close() waits for a cancelled statement to end before it stops waiting; the
// connection is then the pool's business (a dead server fails it, a live one answers).
const CANCEL_SETTLE_MS = 5000;

async function openOnce<T>(sql: Sql, statement: Statement, options: ReadOptions): Promise<RowBatches<T>> {
  const query = sql.unsafe(statement.text, statement.params).raw();
  const delivered: T[][] = []; // batches not taken yet
  let resume: ((next?: unknown) => void) | undefined; // set while the portal waits for us
  let outcome: { failure?: unknown } | undefined; // set once the statement completed or failed
  // A batch shorter than asked came: the statement completed (PostgreSQL sends fewer rows only
  // with its completion, and postgres.js hands batches on as sent: postgres-js-surface.test.ts).
  // Its answer is whole even if the connection dies before the server says it is ready again.
  let complete = false;
  let finished = false;
  let stopped: unknown; // why the read was closed early; rest() throws it
  let arrived = () => {};
  let arrival = Promise.resolve(); // the next batch or the outcome
  const signal = () => (arrived(), (arrival = new Promise((resolve) => (arrived = resolve))));
  signal();
  // The cursor in its callback form: each batch goes to the callback, and the server is asked
  // for the next only once the promise it returned resolves (with sql.CLOSE the portal is
  // closed instead, ending its transaction). The query settles when the statement completes
  // or fails, a lost connection included: a read cut short never ends as if whole.
  const settled = (query.cursor(options.batchSize, (rows) => {
    if (stopped !== undefined) return sql.CLOSE as unknown as void;
    delivered.push(rows as T[]);
    complete ||= rows.length < options.batchSize;
    signal();
    return new Promise((resolve) => (resume = resolve)) as unknown as void;
  }) as Promise<unknown>).then(
    () => ((outcome = {}), signal()),
    (failure: unknown) => ((outcome = { failure }), signal()),
  );

  /** The next batch, or undefined at the statement's end; throws its failure. */
  const fetchBatch = async (): Promise<T[] | undefined> => {
    while (!delivered.length && !complete && !outcome) {
      const next = arrival;
      resume?.(); // ask for the next batch
      resume = undefined;
      await next;
    }
    if (delivered.length || complete) return delivered.shift();
    if ("failure" in outcome!) throw outcome.failure;
    return undefined;
  };

  const close = async (reason?: unknown) => {
    if (finished) return;
    finished = true;
    stopped = reason ?? new Error("the read was closed before its end");
    // Never once the query settled: postgres.js would write to a socket it already dropped.
    if (outcome) return;
    if (resume) return resume(sql.CLOSE); // the portal waits for us: close it
    // Cancel only a statement the server is working on (a batch it sends meanwhile closes the
    // portal, above). A cancel request sent while the portal waits for us is not consumed,
    // and would land on whatever query runs next on that connection.
    query.cancel();
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_SETTLE_MS)))]);
    clearTimeout(timer);
  };

  /** A later batch, unless the database goes silent meanwhile. */
  const watched = async (batch: Promise<T[] | undefined>): Promise<T[] | undefined> => {
    if (!options.silence) return await batch;
    batch.catch(() => {}); // after a silence, close()'s business
    const watch = options.silence.watch();
    try {
      return await Promise.race([batch, watch.silent]);
    } finally {
      watch.stop();
    }
  };

  const timers: ReturnType<typeof setTimeout>[] = [];
  let onAbort: (() => void) | undefined;
  const watch = options.silence?.watch();
  const failures = new Promise<never>((_, reject) => {
    watch?.silent.catch(reject);
    timers.push(setTimeout(() => reject(new DatabaseDeadlineError(options.firstBatchTimeoutMs)), options.firstBatchTimeoutMs));
    if (options.connectTimeoutMs !== undefined) {
      // A query may wait for a connection for ever: with several hosts all down, postgres.js
      // tries them in turn without end (porsager/postgres#1174). postgres.js private
      // behaviour, pinned by tests/db/postgres-js-surface.test.ts: a query's `state` is set
      // once the query is handed to an open connection.
      timers.push(
        setTimeout(() => {
          if ((query as unknown as { state?: unknown }).state) return;
          const late = new DatabaseDeadlineError(options.connectTimeoutMs!, "connection");
          // A silence watch gives its verdict about now: a silent database is told as such (a
          // problem the guard holds back on), not as this read's own deadline, which the guard
          // takes for this request's failure alone (each next request would wait as long).
          if (watch) timers.push(setTimeout(() => reject(late), Math.ceil(options.connectTimeoutMs! / 2)));
          else reject(late);
        }, options.connectTimeoutMs),
      );
    }
    const signal = options.signal;
    if (signal) {
      onAbort = () => reject(signal.reason);
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  const head = fetchBatch();
  head.catch(() => {}); // a failure after a deadline or an abort is close()'s business
  let first: T[] | undefined;
  try {
    first = await Promise.race([head, failures]);
  } catch (err) {
    // Answer now; cancelling and closing go on in the background.
    void close(err);
    throw err;
  } finally {
    timers.forEach(clearTimeout);
    watch?.stop();
    if (onAbort) options.signal?.removeEventListener("abort", onAbort);
  }
  if (!first || complete) finished = true;

  return {
    first: first ?? [],
    finished: () => finished,
    async *rest() {
      try {
        while (stopped === undefined) {
          const next = await watched(fetchBatch());
          if (stopped !== undefined) break; // closed while this batch was on its way
          if (!next) return void (finished = true);
          yield next;
        }
        throw stopped; // closed early: never end as if complete
      } catch (err) {
        await close(err);
        throw stopped ?? err;
      }
    },
    close,
  };
}

/** Opens `statement`, retrying once a failure that a fresh connection hides. */
async function open<T>(sql: Sql, statement: Statement, options: ReadOptions): Promise<RowBatches<T>> {
  try {
    return await openOnce<T>(sql, statement, options);
  } catch (failure) {
    // A server that is not PostgreSQL is told apart first: a retry would only ask it again.
    const err = await identifyPeer(failure);
    // A connection that died while idle (database restarted) fails its next query once;
    // the read is idempotent, so one retry on a fresh connection hides that.
    // A stray cancel (one sent for an earlier query on this connection) is retried the same way.
    if (isStaleConnection(err) || isStrayCancel(err)) return await openOnce<T>(sql, statement, options);
    throw err;
  }
}

/**
 * The one row of a one-row statement (its columns' bytes), read with a read's protections:
 * the first-answer and connection deadlines, the signal, one retry on a stale connection.
 */
export async function readRow(sql: Sql, statement: Statement, options: Omit<ReadOptions, "batchSize" | "rendered">): Promise<Buffer[] | undefined> {
  const batches = await open<Buffer[]>(sql, statement, { ...options, batchSize: 2 });
  await batches.close(); // a one-row result has ended already: nothing to cancel
  return batches.first[0];
}

// A rendered chunk holds 2,000 rows: a few of them a fetch.
const RENDERED_CHUNKS_PER_BATCH = 2;

export async function readProductCosts(sql: Sql, q: ProductCostQuery, options: ReadOptions): Promise<ProductCostRead> {
  const rendered = options.rendered ? renderedAnswerStatement(q) : undefined;
  if (rendered) {
    const chunks = await open<RenderedChunk>(sql, rendered, { ...options, batchSize: RENDERED_CHUNKS_PER_BATCH });
    if (chunks.first.length > 0) return { kind: "rendered", batches: chunks };
    await chunks.close(); // no answer to trust: the rows, then (an empty result has already ended)
  }
  return { kind: "rows", batches: await open<ProductCostRow>(sql, productCostsStatement(q), options) };
}
