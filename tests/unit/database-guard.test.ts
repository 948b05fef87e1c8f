// The guard that keeps the service from opening a connection per request against a database
// it cannot get a session from, on a clock the test moves by hand.
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createDatabaseGuard, FIRST_DELAY_MS, MAX_DELAY_MS } from "../../src/db/database-guard.ts";
import { DatabaseProblemError } from "../../src/db/problems.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const notPostgres = () => Object.assign(new Error('the server at h:1 is not a PostgreSQL server: it answered "HTTP/1.1 400"'), { code: "NOT_POSTGRESQL" });
const refused = () => Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
const noTable = () => new postgres.PostgresError({ code: "42P01", message: 'relation "product_cost_months" does not exist' } as never);

function setup() {
  let clock = 0;
  const logger = memoryLogger();
  const guard = createDatabaseGuard(logger, () => clock);
  let attempts = 0;
  const attempt = (outcome: () => unknown) => () => {
    attempts++;
    const value = outcome();
    return value instanceof Error ? Promise.reject(value) : Promise.resolve(value);
  };
  const tryWith = async (outcome: () => unknown) => {
    try {
      return { ok: await guard.run(attempt(outcome)) };
    } catch (err) {
      return { failed: err instanceof DatabaseProblemError ? "held back" : (err as { code?: string }).code };
    }
  };
  return { guard, logger, tryWith, attempts: () => attempts, advance: (ms: number) => (clock += ms) };
}

describe("a database no session can be had from", () => {
  test("after a failure, requests are answered at once with the problem until one probe may try again", async () => {
    const g = setup();
    expect(await g.tryWith(notPostgres)).toEqual({ failed: "NOT_POSTGRESQL" });
    expect(g.guard.current()?.code).toBe("NOT_POSTGRESQL");
    for (let i = 0; i < 50; i++) expect(await g.tryWith(notPostgres)).toEqual({ failed: "held back" });
    expect(g.attempts()).toBe(1);
    g.advance(FIRST_DELAY_MS);
    expect(await g.tryWith(notPostgres)).toEqual({ failed: "NOT_POSTGRESQL" });
    expect(g.attempts()).toBe(2);
  });

  test("the delay doubles with each failed probe up to its cap: at most four attempts a second, then one every two seconds", async () => {
    const g = setup();
    await g.tryWith(refused);
    const delays: number[] = [];
    for (let probe = 0; probe < 6; probe++) {
      let waited = 0;
      while (g.attempts() === probe + 1) {
        g.advance(10);
        waited += 10;
        await g.tryWith(refused);
      }
      delays.push(waited);
    }
    expect(delays).toEqual([250, 500, 1000, 2000, 2000, 2000]);
    expect(MAX_DELAY_MS).toBe(2000);
  });

  test("only one probe at a time: requests arriving while it runs are held back", async () => {
    const g = setup();
    await g.tryWith(refused);
    g.advance(FIRST_DELAY_MS);
    let release!: () => void;
    const slow = g.guard.run(() => new Promise<string>((resolve) => (release = () => resolve("rows"))));
    expect(await g.tryWith(() => "rows")).toEqual({ failed: "held back" });
    release();
    expect(await slow).toBe("rows");
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
  });

  test("a success clears the problem; each transition is logged once, with the cause and the fix", async () => {
    const g = setup();
    await g.tryWith(refused);
    for (let i = 0; i < 5; i++) {
      g.advance(MAX_DELAY_MS);
      await g.tryWith(refused);
    }
    g.advance(MAX_DELAY_MS);
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
    expect(g.guard.current()).toBeUndefined();
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
    expect(g.logger.lines.map((l) => [l.level, l.msg, l.problem ?? l.was])).toEqual([
      ["error", "database not usable", "DATABASE_UNAVAILABLE"],
      ["info", "database usable again", "DATABASE_UNAVAILABLE"],
    ]);
    expect(g.logger.lines[0]).toMatchObject({ cause: "ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1", fix: expect.stringContaining("PostgreSQL is running") });
  });
});

describe("a session that works but cannot read", () => {
  test("is not held back: every request tries, so a migration or a GRANT takes effect at once", async () => {
    const g = setup();
    for (let i = 0; i < 3; i++) expect(await g.tryWith(noTable)).toEqual({ failed: "42P01" });
    expect(g.attempts()).toBe(3);
    expect(g.guard.current()?.code).toBe("MIGRATIONS_PENDING");
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
    expect(g.logger.lines.filter((l) => l.msg === "database not usable")).toHaveLength(1);
  });

  test("a failure of one request alone (a timeout, a bug) is no problem of the database", async () => {
    const g = setup();
    expect(await g.tryWith(() => Object.assign(new Error("boom"), { code: "57014" }))).toEqual({ failed: "57014" });
    expect(g.guard.current()).toBeUndefined();
    expect(g.logger.lines).toEqual([]);
  });
});
