// The service's own refresh (REFRESH_DATABASE_URL): no timer to install or forget. Every
// REFRESH_INTERVAL_S it folds the writers' changes into the rollup, on a pool of its own
// connected as the tables' owner; the serving pool stays read-only. Several instances on one
// database take turns: a refresh holds an advisory lock, and an instance that finds it taken
// skips its turn (src/rollup/refresh.ts). A failure is logged with its cause and fix and tried
// again at the next turn; it never stops the service, whose answers are exact without it.

import type { Logger } from "../ops/log.ts";
import { createPool, type Sql } from "../database/client.ts";
import { identifyPeer } from "../database/not-postgresql.ts";
import { EVERY_MINUTE, refreshProblem, refreshRollup } from "./refresh.ts";

export interface BackgroundRefreshOptions {
  url: string;
  intervalMs: number;
  connectTimeoutMs: number;
  logger: Logger;
}

export interface BackgroundRefresh {
  /**
   * Stops the turns and closes the pool: a refresh in progress gets `graceMs` to finish,
   * else its statement is cancelled and the step it was in rolls back (its finished steps
   * stay; the next turn, of this instance or another, does the rest).
   */
  stop(graceMs?: number): Promise<void>;
}

export function startBackgroundRefresh(options: BackgroundRefreshOptions): BackgroundRefresh {
  const { logger } = options;
  // Two sessions: the refresh renders two answers at once. No statement timeout: a rebuild
  // adds up every daily row.
  const sql: Sql = createPool({
    url: options.url,
    max: 2,
    connectTimeoutMs: options.connectTimeoutMs,
    statementTimeoutMs: 0,
    readOnly: false,
    applicationName: "product-cost-export-refresh",
    logger,
  });
  let stopped = false;
  // Aborts a refresh in progress at shutdown, once its grace is over: its statement is
  // cancelled in PostgreSQL and its lock released before the pool closes.
  const stopping = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let running: Promise<void> | undefined;

  const turn = async () => {
    try {
      const report = await refreshRollup(sql, { wait: false, ...EVERY_MINUTE, signal: stopping.signal });
      if (report === null) logger.debug("refresh skipped: another refresh is running");
      else if (report.mode === "none") logger.debug("refreshed", { ...report, by: "service" });
      else logger.info("refreshed", { ...report, by: "service" });
    } catch (err) {
      if (stopped) return; // closed under it on shutdown: rolled back, nothing to report
      const found = refreshProblem(await identifyPeer(err, sql));
      logger.warn("background refresh failed", {
        ...(found ? { problem: found.code, cause: found.cause, fix: found.fix } : { error: err instanceof Error ? err.message : String(err) }),
        retry_in_ms: options.intervalMs,
      });
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = turn().finally(() => {
        running = undefined;
        schedule();
      });
    }, options.intervalMs);
  };
  schedule();

  return {
    async stop(graceMs = 5000) {
      stopped = true;
      clearTimeout(timer);
      // The pool is closed only once the turn is over or its time is up: a refresh cut off
      // mid-way (a session reserved, a query in flight) then fails, and nothing waits for it.
      let timeout: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([running, new Promise((resolve) => (timeout = setTimeout(resolve, graceMs)))]);
      clearTimeout(timeout);
      stopping.abort("the service is stopping");
      await Promise.race([running, Bun.sleep(2000)]);
      await sql.end({ timeout: 0 }).catch(() => {});
    },
  };
}
