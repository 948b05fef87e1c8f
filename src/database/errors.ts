// Which database failures mean "the database is unavailable right now" (answered 503
// DATABASE_UNAVAILABLE by failures.ts) rather than a bug (answered 500), and the few kinds
// /metrics sorts them into. The same table is in the README. Besides an outage, that is every
// problem of problems.ts: a database that is not PostgreSQL, refuses the credentials, lacks
// the migrations or does not let the service read.

import postgres from "postgres";
import { databaseProblem, readConflict } from "./problems.ts";

// A server starting up, a connection exception and a failure to connect at all are problems
// of problems.ts, so they are not listed again here.

/** SQLSTATEs of a server that is shutting down, overloaded or cutting sessions. */
const UNAVAILABLE_SQLSTATES = new Set([
  "57P01", // admin_shutdown: terminating connection due to administrator command
  "57P02", // crash_shutdown
  "57014", // query_canceled: statement timeout
  "53300", // too_many_connections
  "53000", // insufficient_resources
  "25P03", // idle_in_transaction_session_timeout
]);

/** Client-side failures reported by postgres.js or the socket layer: a session lost, or the read's own deadline. */
const UNAVAILABLE_CLIENT_CODES = new Set([
  "ECONNRESET",
  "EPIPE", // a query written to a session the server had just closed (a restart: seen as a 500 before)
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "DATABASE_DEADLINE",
]);

export class DatabaseDeadlineError extends Error {
  readonly code = "DATABASE_DEADLINE";
  constructor(ms: number, waitingFor: "answer" | "connection" = "answer") {
    super(`no ${waitingFor === "connection" ? "database connection" : "answer from the database"} within ${ms} ms`);
  }
}

export const DATABASE_ERROR_KINDS = ["timeout", "unavailable", "misconfigured", "query"] as const;
export type DatabaseErrorKind = (typeof DATABASE_ERROR_KINDS)[number];

const TIMEOUT_CODES = new Set(["57014", "DATABASE_DEADLINE", "CONNECT_TIMEOUT"]);

/**
 * timeout: statement timeout, the read's own deadline, or no connection in time;
 * misconfigured: a problem only the operator can fix (problems.ts);
 * unavailable: unreachable, shutting down, starting up, out of connections;
 * query: any other error PostgreSQL reported (a bad cast);
 * undefined: not a database error at all.
 */
export function databaseErrorKind(err: unknown): DatabaseErrorKind | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === "string" && TIMEOUT_CODES.has(code)) return "timeout";
  const problem = databaseProblem(err);
  if (problem && problem.code !== "DATABASE_UNAVAILABLE") return "misconfigured";
  if (isDatabaseUnavailable(err)) return "unavailable";
  if (err instanceof postgres.PostgresError) return "query";
  return undefined;
}

export function isDatabaseUnavailable(err: unknown): boolean {
  if (databaseProblem(err) || readConflict(err)) return true;
  if (err instanceof postgres.PostgresError) return UNAVAILABLE_SQLSTATES.has(err.code);
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && UNAVAILABLE_CLIENT_CODES.has(code);
}

/**
 * A failure that a single retry of an idempotent read may hide: a session the server ended
 * (a restart, pg_terminate_backend: 57P01, then the socket closes or is reset) or that died
 * while idle (EPIPE: the query was written to a socket the server had already closed).
 */
export function isStaleConnection(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === "57P01" || code === "CONNECTION_CLOSED" || code === "CONNECTION_ENDED" || code === "EPIPE" || code === "ECONNRESET";
}

/** A failure of one read that one more read, on a session of its own, may not meet: a session ended, a standby's recovery conflict, a lock conflict. */
export function isRetryableRead(err: unknown): boolean {
  return isStaleConnection(err) || readConflict(err) !== undefined;
}

/**
 * A cancel this read never asked for: one sent for an earlier statement on the same pooled
 * connection that arrived after that statement ended. The read is idempotent, so it is retried.
 * (Our own cancels never surface as 57014: the read reports its deadline or abort reason instead.)
 */
export function isStrayCancel(err: unknown): boolean {
  return err instanceof postgres.PostgresError && err.code === "57014" && err.message.includes("user request");
}
