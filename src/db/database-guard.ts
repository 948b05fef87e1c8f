// Keeps the service from hammering a database it cannot get a session from. postgres.js
// opens a connection per attempt, per pool slot: against a peer that is down, is not
// PostgreSQL, or refuses the credentials, every request would open one more. Once an
// attempt fails that way, the guard answers the next requests at once with the known
// problem, and lets one attempt through (a probe) after a delay that doubles with each
// failed probe, from 250 ms up to 2 s: at most four connection attempts a second, and
// recovery within about two seconds of the database coming back.
//
// Problems of a session that works (migrations missing, no SELECT) are not held back:
// they cost no new connection, and the next request sees a fix at once.
// Transitions are logged once each: "database not usable" with the cause and the fix, and
// "database usable again".

import type { Logger } from "../output/log.ts";
import { databaseProblem, DatabaseProblemError, type DatabaseProblem } from "./problems.ts";

export interface DatabaseGuard {
  /**
   * Runs `attempt` unless the database is known to be unusable (then throws
   * DatabaseProblemError at once), and learns from how it ends.
   */
  run<T>(attempt: () => Promise<T>): Promise<T>;
  /** The problem of the last attempt that failed for every request, until one succeeds. */
  current(): DatabaseProblem | undefined;
}

export const FIRST_DELAY_MS = 250;
export const MAX_DELAY_MS = 2000;

export function createDatabaseGuard(logger: Logger, now: () => number = () => performance.now()): DatabaseGuard {
  let known: DatabaseProblem | undefined; // the last problem seen, until an attempt succeeds
  let failures = 0; // consecutive attempts that could not connect
  let retryAt = 0; // no attempt before this time while `failures` > 0
  let probing = false;

  const succeeded = () => {
    if (known) logger.info("database usable again", { was: known.code });
    known = undefined;
    failures = 0;
  };

  const failed = (err: unknown) => {
    const found = databaseProblem(err);
    if (!found) return; // a failure of that request alone
    if (!known || known.code !== found.code || known.cause !== found.cause) {
      logger.error("database not usable", { problem: found.code, cause: found.cause, fix: found.fix });
    }
    known = found;
    if (found.connecting) {
      failures++;
      retryAt = now() + Math.min(FIRST_DELAY_MS * 2 ** (failures - 1), MAX_DELAY_MS);
    }
  };

  return {
    current: () => known,
    async run(attempt) {
      const holdingBack = known?.connecting && failures > 0;
      if (holdingBack && (probing || now() < retryAt)) throw new DatabaseProblemError(known!);
      const probe = Boolean(holdingBack);
      if (probe) probing = true;
      try {
        const result = await attempt();
        succeeded();
        return result;
      } catch (err) {
        failed(err);
        throw err;
      } finally {
        if (probe) probing = false;
      }
    },
  };
}
