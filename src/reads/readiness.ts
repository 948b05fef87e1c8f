// What GET /readyz and the start-up line report: whether a request would be answered now, and
// from which source (read-source.ts: the rollup, or the daily rows where it is not there for
// this build or not readable). It runs what a request runs (the migrations' record, then the
// product-cost statements of that source over a range with no data, with the serving session's
// settings), so READY means requests will succeed, and a problem comes with its cause and fix
// (problems.ts).
// And it is not ready while the requests' own reads keep failing, whatever its own session
// says (database-guard.ts: servingTrouble), so that a balancer sends their traffic elsewhere.

import postgres from "postgres";
import type { Sql } from "../database/client.ts";
import type { Logger } from "../ops/log.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import { DatabaseDeadlineError, isStaleConnection, isStrayCancel } from "../database/errors.ts";
import { databaseProblem, problem, type DatabaseProblem } from "../database/problems.ts";
import { dailyProbes } from "./product-costs.ts";
import { checkSource, type ReadSource } from "./read-source.ts";

export type Readiness = { ready: true; source: ReadSource } | { ready: false; problem: DatabaseProblem };

/**
 * The source requests read now, once every statement they run works on `sql`; throws otherwise,
 * a server that is not PostgreSQL as NotPostgresqlError.
 */
export async function assertReadable(sql: Sql): Promise<ReadSource> {
  const source = await checkSource(sql, true);
  // (The rollup's statements ran in the check; the daily rows' are run here.)
  if (source.name === "daily") for (const probe of dailyProbes()) await sql.unsafe(probe.text, probe.params);
  return source;
}

/**
 * `sql`, keeping the statements it runs (postgres.js's unsafe(), all the check uses) so that
 * a check past its deadline cancels the one still running: left alone, a probe waiting on a
 * lock (a writer's ACCESS EXCLUSIVE, migrate) waited until its statement timeout, holding the
 * readiness session, so each next /readyz and /metrics poll queued behind it.
 */
function cancellable(sql: Sql): { sql: Sql; cancel(): void; readonly cancelled: boolean } {
  const running = new Set<{ cancel(): void }>();
  let cancelled = false;
  const tracked = new Proxy(sql, {
    get(target, property, receiver) {
      if (property !== "unsafe") return Reflect.get(target, property, receiver);
      return (...args: Parameters<Sql["unsafe"]>) => {
        // Past the deadline the check starts nothing more (its next probe would wait unwatched).
        if (cancelled) return Promise.reject(new Error("the readiness check's deadline passed"));
        const query = target.unsafe(...args);
        running.add(query);
        const done = () => void running.delete(query);
        query.then(done, done);
        return query;
      };
    },
  });
  return {
    sql: tracked,
    cancel() {
      cancelled = true;
      running.forEach((query) => query.cancel());
    },
    get cancelled() {
      return cancelled;
    },
  };
}

/** Readiness, within `timeoutMs`; through `guard` when given, so a known outage is reported without a new connection. */
export async function checkReadiness(sql: Sql, timeoutMs: number, guard?: DatabaseGuard): Promise<Readiness> {
  const check = cancellable(sql);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      check.cancel();
      reject(new DatabaseDeadlineError(timeoutMs));
    }, timeoutMs);
  });
  // Its own session may have been ended while idle (a restart, pg_terminate_backend), or met a
  // cancel sent for an earlier check's statement that arrived after it ended (this deadline's
  // own): neither says anything about the database, so it is tried once more, as a read would be.
  const again = (err: unknown) => !check.cancelled && (isStaleConnection(err) || isStrayCancel(err));
  const readable = () => assertReadable(check.sql).catch((err) => (again(err) ? assertReadable(check.sql) : Promise.reject(err)));
  const attempt = () => Promise.race([readable(), deadline]);
  try {
    const source = await (guard ? guard.run(attempt, "readiness") : attempt());
    const trouble = guard?.servingTrouble();
    return trouble ? { ready: false, problem: trouble } : { ready: true, source };
  } catch (err) {
    // A statement PostgreSQL refused is no outage: saying "cannot be reached" sent operators to
    // the network for what was a read failing on the data (issue 43: an `infinity` row).
    const message = err instanceof Error ? err.message : String(err);
    const found = databaseProblem(err) ?? problem(err instanceof postgres.PostgresError ? "QUERY_FAILED" : "DATABASE_UNAVAILABLE", message);
    return { ready: false, problem: found };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Logs readiness as it changes, once: "database not ready" (error) when it turns not ready, or
 * its problem changes, for a problem the guard has not logged already ("database not usable":
 * a database that cannot be reached or read is logged there, once per episode); "database ready"
 * (info) when it comes back after that. So neither the start nor a /readyz poll every few
 * seconds repeats a line an operator has seen.
 */
export function readinessLog(logger: Logger, guard?: DatabaseGuard): (now: Readiness) => void {
  let said: string | undefined; // the problem of the last "database not ready" line, until ready
  return (now) => {
    if (now.ready) {
      if (said) logger.info("database ready", { was: said, source: now.source.name === "daily" ? "daily rows" : "rollup" });
      said = undefined;
      return;
    }
    const { code, cause, fix } = now.problem;
    if (code === said || guard?.current()?.code === code) return;
    logger.error("database not ready", { problem: code, cause, fix });
    said = code;
  };
}
