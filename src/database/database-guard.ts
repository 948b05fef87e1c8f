// Keeps the service from hammering a database it cannot get a session from. postgres.js
// opens a connection per attempt, per pool slot: against a peer that is down, is not
// PostgreSQL, or refuses the credentials, every request would open one more. Once an
// attempt fails that way, the guard answers the next requests at once with the known
// problem, and lets one attempt through (a probe) after a delay that doubles with each
// failed probe, from 250 ms up to 1 s: at most four connection attempts a second, and
// recovery within a second of the database coming back. The attempts already under way when
// the first one fails (a restart under load fails them all at once) count as that one failure:
// counted each, they made the first probe wait the longest delay.
//
// Problems of a session that works (migrations missing, no SELECT) are not held back:
// they cost no new connection, and the next request sees a fix at once.
// An episode is logged in two lines: "database not usable" with the first cause and the fix
// (again only if the problem itself changes, not its wording: a restart goes from "shutting
// down" to "connection refused"), and "database usable again" with how long it lasted and how
// many requests were answered at once meanwhile. Those requests' own lines are at info: the
// episode's line says why (a fast shutdown under load wrote thousands of error lines).
//
// It also keeps the last seconds of the serving reads' outcomes, so that readiness can tell
// when the service's own connections fail while a new one works (issue 42: pool slots that
// never connected again, while /readyz, on a session of its own, said all was well).

import type { Logger } from "../ops/log.ts";
import { databaseErrorKind } from "./errors.ts";
import { databaseProblem, DatabaseProblemError, problem, type DatabaseProblem } from "./problems.ts";

export interface DatabaseGuard {
  /**
   * Runs `attempt` unless the database is known to be unusable (then throws
   * DatabaseProblemError at once), and learns from how it ends.
   */
  run<T>(attempt: () => Promise<T>, role?: AttemptRole): Promise<T>;
  /** The problem of the last attempt that failed for every request, until one succeeds. */
  current(): DatabaseProblem | undefined;
  /**
   * A problem when the serving reads have been failing for a database reason (see
   * SERVING_WINDOW_MS), though no problem is known: undefined while they do well.
   */
  servingTrouble(): DatabaseProblem | undefined;
}

/** A request's read (its outcome is kept for servingTrouble), or readiness's own check (not kept). */
export type AttemptRole = "serving" | "readiness";

/** How far back servingTrouble looks. */
export const SERVING_WINDOW_MS = 10_000;
/** The serving reads that must fail in that window, and the share of the reads they must be, to call it trouble. */
export const SERVING_TROUBLE_FAILURES = 3;
export const SERVING_TROUBLE_SHARE = 0.1;

export const FIRST_DELAY_MS = 250;
export const MAX_DELAY_MS = 1000;

export function createDatabaseGuard(logger: Logger, now: () => number = () => performance.now()): DatabaseGuard {
  let known: DatabaseProblem | undefined; // the last problem seen, until an attempt succeeds
  let failures = 0; // consecutive attempts that could not connect
  let retryAt = 0; // no attempt before this time while `failures` > 0
  let probing = false;
  // The serving reads' outcomes in the last SERVING_WINDOW_MS, oldest first.
  const outcomes: { at: number; failure?: string }[] = [];
  const keep = (failure?: string) => {
    const at = now();
    outcomes.push(failure === undefined ? { at } : { at, failure });
    while (outcomes.length && outcomes[0]!.at < at - SERVING_WINDOW_MS) outcomes.shift();
  };

  let since = 0; // when the episode began
  let heldBack = 0; // requests answered at once during it

  const succeeded = () => {
    if (known) logger.info("database usable again", { was: known.code, unusable_ms: Math.round(now() - since), answered_at_once: heldBack });
    known = undefined;
    failures = 0;
  };

  const failed = (err: unknown, probe: boolean) => {
    const found = databaseProblem(err);
    if (!found) return; // a failure of that request alone
    if (!known || known.code !== found.code) {
      logger.error("database not usable", { problem: found.code, cause: found.cause, fix: found.fix });
      if (!known) {
        since = now();
        heldBack = 0;
      }
    }
    known = found;
    if (found.connecting && (probe || failures === 0)) {
      failures++;
      retryAt = now() + Math.min(FIRST_DELAY_MS * 2 ** (failures - 1), MAX_DELAY_MS);
    }
  };

  return {
    current: () => known,
    servingTrouble() {
      while (outcomes.length && outcomes[0]!.at < now() - SERVING_WINDOW_MS) outcomes.shift();
      const failed = outcomes.filter((o) => o.failure !== undefined);
      if (failed.length < SERVING_TROUBLE_FAILURES || failed.length < SERVING_TROUBLE_SHARE * outcomes.length) return undefined;
      const last = failed[failed.length - 1]!.failure;
      return problem(
        "READS_FAILING",
        `${failed.length} of the last ${outcomes.length} reads on the service's connections failed in ${SERVING_WINDOW_MS / 1000} s (the last: ${last})`,
      );
    },
    async run(attempt, role = "serving") {
      const holdingBack = known?.connecting && failures > 0;
      if (holdingBack && (probing || now() < retryAt)) {
        heldBack++;
        throw new DatabaseProblemError(known!, true);
      }
      const probe = Boolean(holdingBack);
      if (probe) probing = true;
      try {
        const result = await attempt();
        succeeded();
        if (role === "serving") keep();
        return result;
      } catch (err) {
        failed(err, probe);
        // Only failures of the database count (not a bad query, nor a client that left).
        const kind = databaseErrorKind(err);
        if (role === "serving" && (kind === "unavailable" || kind === "timeout")) keep(err instanceof Error ? err.message : String(err));
        throw err;
      } finally {
        if (probe) probing = false;
      }
    },
  };
}
