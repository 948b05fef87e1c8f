// The postgres.js pool. One place decides the connection options that keep the service
// safe and quick to recover: read-only sessions, a server-side statement timeout, a short
// reconnect backoff, bounded connect time and no NOTICE spam on stdout.

import postgres from "postgres";
import type { Logger } from "../ops/log.ts";
import { connectOptions, parseDatabaseUrl } from "../settings/database-url.ts";

export type Sql = postgres.Sql<{}>;

export interface PoolOptions {
  /** An external PostgreSQL, or… */
  url?: string;
  /** …the Unix socket of the embedded database (which ignores startup parameters). */
  path?: string;
  max: number;
  connectTimeoutMs: number;
  statementTimeoutMs: number;
  /** Serving pools are read-only (default_transaction_read_only): even a bug cannot write. */
  readOnly: boolean;
  applicationName: string;
  /** Pool events (connections closed, reconnect waits) at debug level. */
  logger?: Logger;
}

// Planner settings of every serving session (startup parameters; SET on the embedded database):
// - work_mem 16MB: serving reads sort up to ~10 MB (50,000 products) and add up rollup rows
//   in a hash of ~20 MB; at PostgreSQL's default 4 MB both spill to disk (two years: +40 %).
// - random_page_cost 1.1 (the usual value for SSDs and cached tables): the reads are index
//   lookups (the totals to date of one month, the date index for the days at either end,
//   the daily rows' primary key product by product for the months the change log names),
//   which the default 4 prices as if each were a seek on a spinning disk. On the 50,000-
//   product benchmark today's plans come out the same at 4; 1.1 keeps a long change log's
//   per-product lookups from turning into a scan of the range.
// - jit off: the read's plan carries a branch that adds up every daily row of the range (for
//   a log that names everything, gated off otherwise), whose estimated cost crosses
//   jit_above_cost: compiling the plan took 1.0 s of a 1.35 s read of two years at 50,000
//   products, for a branch that never runs.
// - plan_cache_mode force_custom_plan: sql/queries/product_costs.sql relies on the planner
//   folding the range's bounds to constants (and dropping the pieces a range does not
//   have), which only a custom plan does. PostgreSQL may switch a prepared statement to a
//   generic plan after five runs when that looks cheaper; planning anew costs ~1 ms.
// - max_parallel_workers_per_gather 0: reads go through a cursor (an Execute with a row limit),
//   which PostgreSQL never runs with parallel workers; a plan made for them (partial aggregates
//   under a Gather Merge) then runs in the leader alone, slower than the plan made for one
//   process. The daily rows' GROUP BY (issue 44) of a rolling year at 50,000 products: 5.4 s
//   planned for workers and run without, 3.2 s planned serial (tests/bench/daily-source.ts).
export const SERVING_SETTINGS = { work_mem: "16MB", random_page_cost: "1.1", plan_cache_mode: "force_custom_plan", jit: "off", max_parallel_workers_per_gather: "0" } as const;

export function createPool(options: PoolOptions): Sql {
  // A URL is read as libpq reads it (database-url.ts): its parameters become options, never server settings.
  const target = options.path ? undefined : parseDatabaseUrl(options.url ?? "postgres://postgres@localhost/postgres");
  const connectTimeoutS = target?.connectTimeoutS ?? Math.max(1, Math.ceil(options.connectTimeoutMs / 1000));
  return postgres({
    ...(options.path ? { path: options.path } : connectOptions(target!)),
    max: options.max,
    connect_timeout: connectTimeoutS,
    idle_timeout: 60,
    max_lifetime: 30 * 60,
    // The default backoff grows to 20 s after an outage; recover within about a second instead.
    backoff: (attempt: number) => {
      const seconds = Math.min(0.05 * 2 ** attempt, 1);
      options.logger?.debug("database connection retry", { attempt, wait_ms: seconds * 1000 });
      return seconds;
    },
    onclose: (connection: number) => options.logger?.debug("database connection closed", { connection }),
    prepare: true,
    onnotice: () => {},
    connection: {
      application_name: target?.applicationName ?? options.applicationName,
      ...(target?.options !== undefined ? { options: target.options } : {}),
      ...(options.statementTimeoutMs > 0 ? { statement_timeout: options.statementTimeoutMs } : {}),
      ...(options.readOnly ? { default_transaction_read_only: true, ...SERVING_SETTINGS } : {}),
    },
  });
}
