// Readiness logged as it changes (issue 46: every failed /readyz poll was an error line, and a
// database problem at start was logged twice): one line when it turns not ready, none while a
// poll every few seconds finds the same, none for a problem the guard has logged, one when it
// comes back.
import { expect, test } from "bun:test";
import { createDatabaseGuard } from "../../src/database/database-guard.ts";
import { problem, type ProblemCode } from "../../src/database/problems.ts";
import { readinessLog, type Readiness } from "../../src/reads/readiness.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const ready: Readiness = { ready: true, source: { name: "rollup" } };
const notReady = (code: ProblemCode): Readiness => ({ ready: false, problem: problem(code, `${code} cause`) });
const lines = (logger: ReturnType<typeof memoryLogger>) => logger.lines.map((l) => `${l.level} ${l.msg}${l.problem ? ` ${l.problem}` : ""}${l.was ? ` was ${l.was}` : ""}`);

test("a problem of readiness's own: one line when it appears or changes, none while it lasts, one when ready again", () => {
  const logger = memoryLogger();
  const log = readinessLog(logger);
  for (const r of [ready, ready, notReady("READS_FAILING"), notReady("READS_FAILING"), notReady("READS_FAILING"), notReady("QUERY_FAILED"), ready, ready, notReady("QUERY_FAILED")]) log(r);
  expect(lines(logger)).toEqual([
    "error database not ready READS_FAILING",
    "error database not ready QUERY_FAILED",
    "info database ready was QUERY_FAILED",
    "error database not ready QUERY_FAILED",
  ]);
  expect(logger.lines[0]).toMatchObject({ cause: "READS_FAILING cause", fix: expect.any(String) });
});

test("a problem the guard has logged (database not usable) is not said again, at the start or after", async () => {
  const logger = memoryLogger();
  let clock = 0;
  const guard = createDatabaseGuard(logger, () => clock);
  const log = readinessLog(logger, guard);
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
  await guard.run(() => Promise.reject(refused), "readiness").catch(() => {});
  const code = guard.current()!.code;
  for (let poll = 0; poll < 5; poll++) log(notReady(code));
  clock += 1000; // the guard's next probe is due
  await guard.run(() => Promise.resolve(), "readiness");
  log(ready);
  expect(lines(logger)).toEqual(["error database not usable DATABASE_UNAVAILABLE", "info database usable again was DATABASE_UNAVAILABLE"]);
});
