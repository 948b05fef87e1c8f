// The error model: every failure's status, body, metric kind, log level and exit code come
// from one table (src/failures.ts), and an uncaught failure ends the process with exit 1.
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { ConfigError } from "../../src/settings/config.ts";
import { DatabaseDeadlineError } from "../../src/database/errors.ts";
import { DatabaseProblemError, problem } from "../../src/database/problems.ts";
import {
  classify,
  ClientClosedRequestError,
  DataError,
  INVALID_API_KEY,
  InterruptedError,
  ListenError,
  OVERLOADED,
  RequestDeadlineError,
} from "../../src/failures.ts";

const pgError = (code: string) => new postgres.PostgresError({ code, message: `server said ${code}` } as never);
const UNAVAILABLE = { status: 503, detail: "DATABASE_UNAVAILABLE", headers: { "retry-after": "5" }, level: "error" };

describe("classify: what each failure answers, how it is counted and logged", () => {
  test.each([
    ["a wrong key", INVALID_API_KEY(), { status: 401, detail: "INVALID_API_KEY", headers: {}, level: "info" }],
    ["no slot for the read", OVERLOADED(1), { status: 503, detail: "OVERLOADED", headers: { "retry-after": "1" }, level: "error" }],
    ["the client went away", new ClientClosedRequestError(), { status: 499, detail: "CLIENT_CLOSED_REQUEST", headers: {}, level: "info" }],
    ["REQUEST_TIMEOUT_MS passed: a request timeout, not a database one", new RequestDeadlineError(100), { ...UNAVAILABLE, metric: "request_timeout" }],
    ["the read's own deadline", new DatabaseDeadlineError(100), { ...UNAVAILABLE, metric: "timeout" }],
    ["a statement timeout", pgError("57014"), { ...UNAVAILABLE, metric: "timeout" }],
    ["a database shutting down", pgError("57P01"), { ...UNAVAILABLE, metric: "unavailable" }],
    ["a bad cast", pgError("22008"), { status: 500, detail: "INTERNAL_ERROR", headers: {}, level: "error", metric: "query" }],
    ["a bug", new TypeError("x is undefined"), { status: 500, detail: "INTERNAL_ERROR", headers: {}, level: "error" }],
  ])("%s", (_, err, expected) => {
    const { exitCode, problem, ...failure } = classify(err);
    expect(failure).toEqual(expected as never);
    expect(exitCode).toBe(1);
    expect(problem).toBeUndefined();
  });

  test("a problem only the operator can fix is a 503 whose log line names its code and fix", () => {
    const failure = classify(new DatabaseProblemError(problem("PERMISSION_DENIED", "permission denied for table products")));
    expect(failure).toMatchObject({ ...UNAVAILABLE, metric: "misconfigured", problem: { code: "PERMISSION_DENIED" } });
    expect(failure.problem!.fix).toStartWith("grant the service's role SELECT");
  });

  test.each([
    ["bad configuration", new ConfigError("PORT: not a number"), 2],
    ["a port that cannot be listened on", new ListenError("port 80 on 0.0.0.0 is already in use"), 2],
    ["bad data given to load-csv", new DataError("load-csv x.csv: line 4 …; nothing was loaded"), 2],
    ["an interrupted prompt", new InterruptedError("hash-key: interrupted"), 2],
    ["a database that is down", pgError("57P01"), 1],
    ["a bug", new Error("boom"), 1],
  ])("%s exits %d", (_, err, code) => {
    expect(classify(err).exitCode).toBe(code as never);
  });
});

describe("an uncaught failure while serving", () => {
  // Run in a child process: the policy ends the process it is installed in.
  const run = async (body: string) => {
    const script = `
      import { exitOnUncaught } from "${import.meta.dir}/../../src/failures.ts";
      import { createLogger } from "${import.meta.dir}/../../src/ops/log.ts";
      exitOnUncaught(createLogger({ level: "info", format: "json" }));
      setInterval(() => {}, 1000); // a server would keep the process alive
      ${body}`;
    const child = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const code = await child.exited;
    return { code, lines: (await new Response(child.stdout).text()).trim().split("\n").map((l) => JSON.parse(l)) };
  };

  test("an uncaught exception is logged with its cause and the process exits 1 (systemd restarts it)", async () => {
    const { code, lines } = await run(`setTimeout(() => { throw new RangeError("boom"); }, 10);`);
    expect(code).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ level: "error", msg: "fatal: uncaught exception", error: "boom", error_type: "RangeError" })]);
  });

  test("so is an unhandled rejection", async () => {
    const { code, lines } = await run(`setTimeout(() => void Promise.reject(new Error("lost")), 10);`);
    expect(code).toBe(1);
    expect(lines).toEqual([expect.objectContaining({ level: "error", msg: "fatal: unhandled rejection", error: "lost" })]);
  });

  test("the line carries the stack, where the bug is, and a refused statement's text (never its parameters)", async () => {
    const { lines } = await run(`
      import postgres from "postgres";
      function whereTheBugIs() {
        const err = new postgres.PostgresError({ message: "canceling statement", code: "40001" });
        return Promise.reject(Object.assign(err, { query: "select $1::int", parameters: ["secret-param"] }));
      }
      setTimeout(() => void whereTheBugIs(), 10);`);
    expect(lines).toEqual([expect.objectContaining({ msg: "fatal: unhandled rejection", error_code: "40001", statement: "select $1::int", stack: expect.stringContaining("whereTheBugIs") })]);
    expect(JSON.stringify(lines)).not.toContain("secret-param");
  });
});
