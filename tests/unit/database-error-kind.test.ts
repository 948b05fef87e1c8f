import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { databaseErrorKind, DatabaseDeadlineError, isDatabaseUnavailable, isStaleConnection } from "../../src/database/errors.ts";
import { DatabaseSilentError } from "../../src/database/silence.ts";

const pgError = (code: string) => new postgres.PostgresError({ code, message: `server said ${code}` } as never);
const clientError = (code: string) => Object.assign(new Error(code), { code });

describe("database failures are sorted into timeout, unavailable, misconfigured and query for /metrics", () => {
  test.each([
    [pgError("57014"), "timeout"],
    [new DatabaseDeadlineError(100), "timeout"],
    [clientError("CONNECT_TIMEOUT"), "timeout"],
    [clientError("ECONNREFUSED"), "unavailable"],
    [new DatabaseSilentError(100), "unavailable"],
    [clientError("CONNECTION_CLOSED"), "unavailable"],
    [clientError("ECONNRESET"), "unavailable"],
    [clientError("EPIPE"), "unavailable"],
    [pgError("57P01"), "unavailable"],
    [pgError("08006"), "unavailable"],
    [pgError("53300"), "unavailable"],
    [pgError("42P01"), "misconfigured"],
    [pgError("42501"), "misconfigured"],
    [pgError("28P01"), "misconfigured"],
    [pgError("3D000"), "misconfigured"],
    [clientError("NOT_POSTGRESQL"), "misconfigured"],
    [pgError("57P03"), "unavailable"],
    [pgError("22008"), "query"],
  ])("%p is %s", (err, kind) => {
    expect(databaseErrorKind(err)).toBe(kind as never);
  });

  test.each([new Error("boom"), new RangeError("Invalid time value"), "a string", undefined, null])("%p is not a database error", (err) => {
    expect(databaseErrorKind(err)).toBeUndefined();
  });
});

describe("a session the server closed under a query (a restart)", () => {
  // What postgres.js rejects a query with when it wrote it to a socket PostgreSQL had just
  // closed: seen in tests/e2e/outage.test.ts as a 500 INTERNAL_ERROR during a restart.
  const epipe = Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32, syscall: "write" });
  test("is the database unavailable (503), not a bug (500)", () => {
    expect(isDatabaseUnavailable(epipe)).toBe(true);
  });
  test("is retried once, invisibly: the query never ran", () => {
    expect(isStaleConnection(epipe)).toBe(true);
  });
});
