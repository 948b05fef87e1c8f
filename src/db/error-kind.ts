// Sorts a database failure into a few kinds for /metrics, so an operator can tell a slow
// database from an unreachable one from a broken query without a label per SQLSTATE.

import postgres from "postgres";
import { isDatabaseUnavailable } from "./errors.ts";
import { databaseProblem, DatabaseProblemError } from "./problems.ts";

export const DATABASE_ERROR_KINDS = ["timeout", "unavailable", "misconfigured", "query"] as const;
export type DatabaseErrorKind = (typeof DATABASE_ERROR_KINDS)[number];

const TIMEOUT_CODES = new Set(["57014", "DATABASE_DEADLINE", "CONNECT_TIMEOUT"]);

/**
 * timeout: statement timeout, our own deadline, or no connection in time;
 * misconfigured: a problem only the operator can fix (not PostgreSQL, wrong credentials or
 *   database name, migrations missing, no SELECT; see problems.ts);
 * unavailable: unreachable, shutting down, starting up, out of connections;
 * query: any other error PostgreSQL reported (a bad cast);
 * undefined: not a database error at all.
 */
export function databaseErrorKind(err: unknown): DatabaseErrorKind | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) return "timeout";
  const problem = err instanceof DatabaseProblemError ? err.problem : databaseProblem(err);
  if (problem && problem.code !== "DATABASE_UNAVAILABLE") return "misconfigured";
  if (isDatabaseUnavailable(err)) return "unavailable";
  if (err instanceof postgres.PostgresError) return "query";
  return undefined;
}
