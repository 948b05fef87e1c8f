// Database failures that no retry of the same request will fix, because they concern every
// request: the database cannot be reached, is not PostgreSQL, refuses the credentials, does
// not exist, lacks the migrations, or does not let the service read. Each has a code (what
// /readyz says), the cause (the driver's or PostgreSQL's own words) and the fix an operator
// applies. A client sees 503 {"detail":"DATABASE_UNAVAILABLE"} for all of them; the log line
// and /readyz carry the rest. The same table is in the README (Troubleshooting).

import postgres from "postgres";

export type ProblemCode =
  | "DATABASE_UNAVAILABLE"
  | "NOT_POSTGRESQL"
  | "AUTHENTICATION_FAILED"
  | "DATABASE_NOT_FOUND"
  | "MIGRATIONS_PENDING"
  | "PERMISSION_DENIED"
  | "READS_FAILING"
  | "RECOVERY_CONFLICT"
  | "LOCK_CONFLICT"
  | "QUERY_FAILED";

export interface DatabaseProblem {
  code: ProblemCode;
  /** What went wrong, in the words of PostgreSQL or the driver (for the log). */
  cause: string;
  /**
   * What went wrong, fit for an unauthenticated /readyz: the cause itself when it names only
   * tables and migrations, else a fixed sentence (no host, port, user or database name).
   */
  summary: string;
  /** What the operator does about it. */
  fix: string;
  /**
   * No session can be had at all (as opposed to a session that cannot read): new attempts
   * open new connections, so they are spaced out (see database-guard.ts).
   */
  connecting: boolean;
}

const FIX: Record<ProblemCode, string> = {
  DATABASE_UNAVAILABLE: "check that PostgreSQL is running and reachable at the host and port of DATABASE_URL",
  NOT_POSTGRESQL: "DATABASE_URL's host and port belong to another kind of server: point it at PostgreSQL's (5432 by default)",
  AUTHENTICATION_FAILED: "check the user and password in DATABASE_URL, and the server's pg_hba.conf",
  DATABASE_NOT_FOUND: "check the database name in DATABASE_URL",
  MIGRATIONS_PENDING:
    "the service reads the ETL's tables products and product_daily_costs: check that DATABASE_URL names the ETL's database; for a new database, or a rollup table dropped by hand, run `product-cost-export migrate` with a DATABASE_URL of the tables' owner",
  READS_FAILING:
    "the request lines of the log name each failure; check PostgreSQL's log for sessions it ended or statements it cancelled (a restart, a failover, pg_terminate_backend, a standby's recovery conflicts)",
  QUERY_FAILED:
    "a bug: report it with the log line, which names PostgreSQL's error (the data itself never stops a read: issue 43)",
  RECOVERY_CONFLICT:
    "on the standby, set hot_standby_feedback = on (the primary then keeps the rows a read still needs), or raise max_standby_streaming_delay above the longest read (README: replicas)",
  LOCK_CONFLICT:
    "a writer's transaction held a lock the read waited for (an ETL's ALTER TABLE or LOCK TABLE of products or product_daily_costs, a migrate): keep such transactions short, and take the two tables in the order products, then product_daily_costs, as the service's reads do; a lock_timeout set for the service's role bounds the wait (PostgreSQL's log names the other session)",
  PERMISSION_DENIED:
    "grant the service's role SELECT on products and product_daily_costs (and, to read the rollup `migrate` builds, on product_cost_months, product_cost_answers, product_cost_deltas, product_cost_refreshes, product_cost_folded_changes and schema_migrations: README, the read-only role)",
};

// Failing to connect at all: refused, no such host, no route, no answer in time.
const UNREACHABLE_CODES = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ETIMEDOUT",
  "CONNECT_TIMEOUT",
  "DATABASE_SILENT", // silence.ts: sessions and a new connection alike get no answer
]);

const SQLSTATE_PROBLEMS: Record<string, ProblemCode> = {
  "28P01": "AUTHENTICATION_FAILED", // invalid_password
  "28000": "AUTHENTICATION_FAILED", // invalid_authorization_specification (no pg_hba.conf entry, no such role)
  "3D000": "DATABASE_NOT_FOUND", // invalid_catalog_name
  "42P01": "MIGRATIONS_PENDING", // undefined_table
  "42703": "MIGRATIONS_PENDING", // undefined_column
  "42883": "MIGRATIONS_PENDING", // undefined_function (the rollup's cost_total)
  "42501": "PERMISSION_DENIED", // insufficient_privilege
};

const SUMMARY: Partial<Record<ProblemCode, string>> = {
  DATABASE_UNAVAILABLE: "PostgreSQL cannot be reached or did not answer in time",
  NOT_POSTGRESQL: "the server at DATABASE_URL's host and port is not PostgreSQL",
  AUTHENTICATION_FAILED: "PostgreSQL refused the user or password of DATABASE_URL",
  DATABASE_NOT_FOUND: "the database named in DATABASE_URL does not exist",
  QUERY_FAILED: "PostgreSQL refused a statement of the read path",
  RECOVERY_CONFLICT: "a hot standby cancelled a read to replay the primary's changes",
  LOCK_CONFLICT: "a read was stopped by PostgreSQL waiting for a lock: chosen as a deadlock's victim, or past lock_timeout",
  READS_FAILING: "requests' reads on the service's connections keep failing for a database reason, though a new connection works",
};

export function problem(code: ProblemCode, cause: string): DatabaseProblem {
  const connecting = code === "DATABASE_UNAVAILABLE" || code === "NOT_POSTGRESQL" || code === "AUTHENTICATION_FAILED" || code === "DATABASE_NOT_FOUND";
  return { code, cause, summary: SUMMARY[code] ?? cause, fix: FIX[code], connecting };
}

/** The problem `err` reveals, or undefined for a failure of this request alone (a timeout, a lost connection, a bug). */
export function databaseProblem(err: unknown): DatabaseProblem | undefined {
  if (err instanceof DatabaseProblemError) return err.problem;
  if (err instanceof postgres.PostgresError) {
    const code = SQLSTATE_PROBLEMS[err.code];
    if (code) return problem(code, err.message);
    // cannot_connect_now (starting up, in recovery) and connection exceptions (class 08).
    if (err.code === "57P03" || err.code.startsWith("08")) return problem("DATABASE_UNAVAILABLE", err.message);
    return undefined;
  }
  const code = (err as { code?: unknown } | null)?.code;
  const message = err instanceof Error ? err.message : String(err);
  if (code === "NOT_POSTGRESQL") return problem("NOT_POSTGRESQL", message);
  if (typeof code === "string" && UNREACHABLE_CODES.has(code)) return problem("DATABASE_UNAVAILABLE", `${code}: ${message}`);
  return undefined;
}

/**
 * A hot standby cancelled this read (or ended its session) to replay a change of the primary
 * that removes what the read still needed: SQLSTATE 40001, or 40P01 for a buffer pin deadlock,
 * "… due to conflict with recovery". A failure of that read alone (another read may not meet
 * it), so not a problem of databaseProblem's; its cause and fix go into the request's log line.
 */
export function recoveryConflict(err: unknown): DatabaseProblem | undefined {
  if (!(err instanceof postgres.PostgresError) || (err.code !== "40001" && err.code !== "40P01")) return undefined;
  return err.message.includes("conflict with recovery") ? problem("RECOVERY_CONFLICT", err.message) : undefined;
}

/**
 * PostgreSQL stopped this read while it waited for a lock: the victim of a deadlock with a
 * writer's transaction (40P01: an ETL that alters or locks products and then
 * product_daily_costs while the read holds one and waits for the other), or past a lock_timeout
 * set for the role (55P03). A failure of that read alone, as a recovery conflict: read once
 * more, the other transaction has then ended or gone on.
 */
export function lockConflict(err: unknown): DatabaseProblem | undefined {
  if (!(err instanceof postgres.PostgresError) || (err.code !== "40P01" && err.code !== "55P03") || recoveryConflict(err)) return undefined;
  return problem("LOCK_CONFLICT", err.message);
}

/** A conflict that stopped this read alone, one more read may not meet: a standby's recovery, or a lock. */
export function readConflict(err: unknown): DatabaseProblem | undefined {
  return recoveryConflict(err) ?? lockConflict(err);
}

/** An error that stands for a known problem: thrown while the database is known to be unusable. */
export class DatabaseProblemError extends Error {
  readonly code: ProblemCode;
  /** `heldBack`: thrown without trying, the problem being known (database-guard.ts). */
  constructor(
    readonly problem: DatabaseProblem,
    readonly heldBack = false,
  ) {
    super(problem.cause);
    this.code = problem.code;
  }
}
