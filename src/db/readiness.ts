// What GET /readyz and the start-up line report: whether a request would be answered now.
// It runs what a request runs (the migrations' record, then the product-cost statements of
// the read path over a range with no data, with the serving session's settings), so READY
// means requests will succeed, and a problem comes with its cause and fix (problems.ts).
// And it is not ready while the requests' own reads keep failing, whatever its own session
// says (database-guard.ts: servingTrouble), so that a balancer sends their traffic elsewhere.

import postgres from "postgres";
import { answerVersionStatement } from "./answer-version.ts";
import type { Sql } from "./client.ts";
import type { DatabaseGuard } from "./database-guard.ts";
import { DatabaseDeadlineError, isStaleConnection } from "./errors.ts";
import { pendingMigrations } from "./migrations.ts";
import { identifyPeer } from "./not-postgresql.ts";
import { databaseProblem, DatabaseProblemError, problem, type DatabaseProblem } from "./problems.ts";
import { readPathProbes } from "./product-costs.ts";

export type Readiness = { ready: true } | { ready: false; problem: DatabaseProblem };

/** Throws unless every statement a request may run works on `sql`; a server that is not PostgreSQL as NotPostgresqlError. */
export async function assertReadable(sql: Sql): Promise<void> {
  const pending = await pendingMigrations(sql).catch(async (err) => Promise.reject(await identifyPeer(err, sql)));
  if (pending.length) {
    throw new DatabaseProblemError(problem("MIGRATIONS_PENDING", `migrations ${pending.join(", ")} of this build are not applied`));
  }
  for (const probe of [answerVersionStatement("0001-01-01", "0001-01-31"), ...readPathProbes()]) await sql.unsafe(probe.text, probe.params);
}

/** Readiness, within `timeoutMs`; through `guard` when given, so a known outage is reported without a new connection. */
export async function checkReadiness(sql: Sql, timeoutMs: number, guard?: DatabaseGuard): Promise<Readiness> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DatabaseDeadlineError(timeoutMs)), timeoutMs);
  });
  // Its own session may have been ended while idle (a restart, pg_terminate_backend): that says
  // nothing about the database, so it is tried once more on a new one, as a read would be.
  const readable = () => assertReadable(sql).catch((err) => (isStaleConnection(err) ? assertReadable(sql) : Promise.reject(err)));
  const attempt = () => Promise.race([readable(), deadline]);
  try {
    await (guard ? guard.run(attempt, "readiness") : attempt());
    const trouble = guard?.servingTrouble();
    return trouble ? { ready: false, problem: trouble } : { ready: true };
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
