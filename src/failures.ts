// The one place that decides what a failure means, wherever it happens: the status and body
// a client gets, the problem code and fix its log line names, the kind /metrics counts it
// under, the log level, and the exit code of a command it stops. Each error type means one
// thing; anything not named here is a bug: 500 INTERNAL_ERROR (the cause in the log only), exit 1.
//
//   ApiError                   its status and {"detail":"<CODE>"} (401, 400, 429, 503 ...)
//   ClientClosedRequestError   499, logged at info: nobody reads the answer (nginx's status)
//   RequestDeadlineError       503 DATABASE_UNAVAILABLE as before, counted as a request timeout
//   database unavailable       503 DATABASE_UNAVAILABLE + Retry-After, by kind (database/errors.ts)
//   a query PostgreSQL refused 500, counted as a database error of kind "query"
//   ConfigError, ListenError,  exit 2: the operator fixes how it is run (systemd does not
//   DataError, InterruptedError  restart after 2); any other failure of a command exits 1

import postgres from "postgres";
import { ConfigError } from "./settings/config.ts";
import { databaseErrorKind, type DatabaseErrorKind } from "./database/errors.ts";
import { databaseProblem, DatabaseProblemError, readConflict, type DatabaseProblem } from "./database/problems.ts";
import { errorFields, type Level, type Logger } from "./ops/log.ts";

/** An answer with a fixed status and `{"detail": <detail>}` body: a code, a reason phrase, or 422's items. */
export class ApiError<Detail extends string | readonly object[] = string | readonly object[]> extends Error {
  constructor(
    readonly status: number,
    readonly detail: Detail,
    readonly headers: Record<string, string> = {},
    /** The level of the request's log line when not the status's own (info below 500). */
    readonly level?: Level,
  ) {
    super(typeof detail === "string" ? detail : `${status}`);
  }
}

export const NOT_CONFIGURED = () => new ApiError(503, "EXTERNAL_API_NOT_CONFIGURED");
export const INVALID_API_KEY = () => new ApiError(401, "INVALID_API_KEY");
/** A key past its `expires=`: the client's 401 is an unknown key's, the operator's line a warning. */
export const KEY_EXPIRED = () => new ApiError(401, "INVALID_API_KEY", {}, "warn");
export const INVALID_MONTH_RANGE = () => new ApiError(400, "INVALID_MONTH_RANGE");
/** If-Match named no current representation (RFC 9110 §13.1.1); a protocol error, so its reason phrase, as Starlette's 404 and 405. */
export const PRECONDITION_FAILED = () => new ApiError(412, "Precondition Failed");
export const OVERLOADED = (retryAfterSeconds: number) => new ApiError(503, "OVERLOADED", { "retry-after": String(retryAfterSeconds) });
export const RATE_LIMITED = (retryAfterSeconds: number, headers: Record<string, string> = {}) =>
  new ApiError(429, "RATE_LIMITED", { "retry-after": String(retryAfterSeconds), ...headers });
/** The query's failures, FastAPI's 422 body: Pydantic's items (src/query/product-cost-params.ts). */
export const VALIDATION_FAILED = (items: readonly object[]) => new ApiError(422, items);

// The protocol's own refusals, worded as Starlette and uvicorn word them (their reason phrases).
/** A request target with no path (CONNECT's authority form). */
export const BAD_REQUEST = () => new ApiError(400, "Bad Request");
export const NOT_FOUND = () => new ApiError(404, "Not Found");
export const METHOD_NOT_ALLOWED = (allow: string) => new ApiError(405, "Method Not Allowed", { allow });
export const URI_TOO_LONG = () => new ApiError(414, "URI Too Long");
export const HEADERS_TOO_LARGE = () => new ApiError(431, "Request Header Fields Too Large");

/** The client closed the connection before its answer was done. */
export class ClientClosedRequestError extends Error {
  readonly code = "CLIENT_CLOSED_REQUEST";
  constructor() {
    super("the client closed the connection");
  }
}

/**
 * The service itself closed the connection before the answer was done: SHUTDOWN_TIMEOUT_MS ran
 * out while it stopped. Not the client's doing, so never logged as a 499.
 */
export class ShutdownCutError extends Error {
  readonly code = "SHUTDOWN_TIMEOUT";
  constructor(readonly ms: number) {
    super(`the service stopped before the answer was done (SHUTDOWN_TIMEOUT_MS, ${ms} ms)`);
  }
}

/** REQUEST_TIMEOUT_MS passed before the answer's last byte: a slow request or a slow client, not a slow database. */
export class RequestDeadlineError extends Error {
  readonly code = "REQUEST_TIMEOUT";
  constructor(readonly ms: number) {
    super(`request not finished within REQUEST_TIMEOUT_MS (${ms} ms)`);
  }
}

/** The address or port cannot be listened on. */
export class ListenError extends Error {}

/** Input data a command was given is wrong (load-csv's file); the message names where. */
export class DataError extends Error {}

/** The operator interrupted a prompt (Ctrl-C). */
export class InterruptedError extends Error {}

/** What a 503 DATABASE_UNAVAILABLE tells clients to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/** What /metrics counts a failure under: database_errors_total{kind}, or request_timeouts_total. */
export type FailureMetric = DatabaseErrorKind | "request_timeout";

export interface Failure {
  status: number;
  detail: string | readonly object[];
  headers: Record<string, string>;
  level: Level;
  metric?: FailureMetric;
  /** A problem only the operator can fix: its code and fix go into the log line. */
  problem?: DatabaseProblem;
  exitCode: 1 | 2;
}

const EXIT_2 = [ConfigError, ListenError, DataError, InterruptedError];

export function classify(err: unknown): Failure {
  const exitCode = EXIT_2.some((type) => err instanceof type) ? 2 : 1;
  if (err instanceof ApiError) return { status: err.status, detail: err.detail, headers: err.headers, level: err.level ?? (err.status >= 500 ? "error" : "info"), exitCode };
  if (err instanceof ClientClosedRequestError) return { status: 499, detail: "CLIENT_CLOSED_REQUEST", headers: {}, level: "info", exitCode };
  // Expected of a stop that outlasts its grace period: worth a look, not an alarm.
  if (err instanceof ShutdownCutError) return { status: 503, detail: "SHUTTING_DOWN", headers: {}, level: "warn", exitCode };
  // Transient by nature (a restart, a migration, a grant away): clients may retry.
  const unavailable = { status: 503, detail: "DATABASE_UNAVAILABLE", headers: { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) }, level: "error", exitCode } as const;
  if (err instanceof RequestDeadlineError) return { ...unavailable, metric: "request_timeout" };
  const kind = databaseErrorKind(err);
  const problem = databaseProblem(err) ?? readConflict(err);
  // Answered at once during a known outage: the guard's one line for the episode says why.
  const level = err instanceof DatabaseProblemError && err.heldBack ? "info" : "error";
  if (kind && kind !== "query") return { ...unavailable, level, metric: kind, ...(problem ? { problem } : {}) };
  return { status: 500, detail: "INTERNAL_ERROR", headers: {}, level: "error", exitCode, ...(kind ? { metric: kind } : {}) };
}

/**
 * After an uncaught exception or an unhandled rejection the process's state is unknown (a
 * pool, a stream, a timer half done): it is logged with its cause and the process exits 1, so
 * systemd restarts it (Restart=on-failure) and balancers move to the other instances meanwhile.
 */
export function exitOnUncaught(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  const fatal = (kind: string) => (err: unknown) => {
    logger.error(`fatal: ${kind}`, { ...errorFields(err), ...bugFields(err) });
    exit(1);
  };
  process.on("uncaughtException", fatal("uncaught exception"));
  process.on("unhandledRejection", fatal("unhandled rejection"));
}

/**
 * What finds a bug's place: its stack and, for a statement PostgreSQL refused, the statement's
 * text (postgres.js keeps it on the error; the project's own SQL, never its parameters, which
 * may be a client's). A request's line has neither: its failures are expected ones.
 */
function bugFields(err: unknown): Record<string, string> {
  if (!(err instanceof Error)) return {};
  const statement = err instanceof postgres.PostgresError ? (err as { query?: unknown }).query : undefined;
  return { ...(err.stack ? { stack: err.stack } : {}), ...(typeof statement === "string" ? { statement: statement.slice(0, 500) } : {}) };
}
