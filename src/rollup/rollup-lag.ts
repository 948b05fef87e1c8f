// How far the rollup lags behind the writers (sql/queries/rollup_lag.sql). Answers stay
// exact whatever the lag; only their speed suffers, so this is for operators to see (the
// gauges of GET /metrics, the body of /readyz), never a reason to refuse requests.

import rollupLagQuery from "../../sql/queries/rollup_lag.sql" with { type: "text" };
import type { Sql } from "../database/client.ts";

export interface RollupLag {
  /** Notes the refresh has not folded in yet (at most a million are counted). */
  changesWaiting: number;
  /** Seconds since the last refresh committed; null when none has run. */
  lastRefreshAgeSeconds: number | null;
  /** How long that refresh took; null when none has run. */
  lastRefreshDurationSeconds: number | null;
  /** How long the refresh running now has run; 0 when none runs. */
  refreshRunningSeconds: number;
  /** The last refresh could not fold some products' notes (its log line names them). */
  refreshFailing: boolean;
}

/**
 * Past this, with changes waiting, the lag is worth a look (/readyz names it): five periods
 * of the one-minute refresh timer, or of REFRESH_INTERVAL_S at its default.
 */
export const LARGE_LAG_SECONDS = 300;

export function lagIsLarge(lag: RollupLag): boolean {
  return lag.changesWaiting > 0 && (lag.lastRefreshAgeSeconds === null || lag.lastRefreshAgeSeconds > LARGE_LAG_SECONDS);
}

/** The lag now, or undefined when it cannot be read within `timeoutMs` (the database down, not migrated). */
export async function readRollupLag(sql: Sql, timeoutMs: number): Promise<RollupLag | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const query = sql.unsafe(rollupLagQuery);
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), timeoutMs)));
  try {
    const rows = await Promise.race([query, late]);
    if (rows === "late") {
      query.cancel();
      return undefined;
    }
    const row = (
      rows as unknown as {
        changes_waiting: number;
        last_refresh_age_seconds: number | null;
        last_refresh_duration_seconds: number | null;
        refresh_running_seconds: number;
        refresh_failing: boolean;
      }[]
    )[0]!;
    return {
      changesWaiting: row.changes_waiting,
      lastRefreshAgeSeconds: row.last_refresh_age_seconds,
      lastRefreshDurationSeconds: row.last_refresh_duration_seconds,
      refreshRunningSeconds: row.refresh_running_seconds,
      refreshFailing: row.refresh_failing,
    };
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
