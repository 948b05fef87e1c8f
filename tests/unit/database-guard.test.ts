// The guard that keeps the service from opening a connection per request against a database
// it cannot get a session from, on a clock the test moves by hand.
import { describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createDatabaseGuard, FIRST_DELAY_MS, MAX_DELAY_MS } from "../../src/database/database-guard.ts";
import { DatabaseProblemError } from "../../src/database/problems.ts";
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

  test("the delay doubles with each failed probe up to its cap: at most four attempts a second, then one a second", async () => {
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
    expect(delays).toEqual([250, 500, 1000, 1000, 1000, 1000]);
    expect(MAX_DELAY_MS).toBe(1000);
  });

  test("attempts under way when the database goes count as one failure: the first probe comes 250 ms later (issue 42)", async () => {
    // A restart under load fails every read in flight at once; counted each, six of them made
    // the first probe wait the longest delay, and every request meanwhile got 503.
    const g = setup();
    const inFlight = Array.from({ length: 6 }, () => {
      let fail!: () => void;
      const run = g.guard.run(() => new Promise((_, reject) => (fail = () => reject(refused()))));
      run.catch(() => {});
      return { run, fail: () => fail() };
    });
    for (const attempt of inFlight) {
      attempt.fail();
      await attempt.run.catch(() => {});
    }
    expect(await g.tryWith(() => "rows")).toEqual({ failed: "held back" });
    g.advance(FIRST_DELAY_MS);
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
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

  test("an episode is two lines, whatever its wording on the way: the first cause, then how long and how many were answered at once (issue 42)", async () => {
    // A fast shutdown: sessions refused with "shutting down", then connections refused.
    const g = setup();
    const shuttingDown = () => new postgres.PostgresError({ code: "57P03", message: "the database system is shutting down" } as never);
    expect(await g.tryWith(shuttingDown)).toEqual({ failed: "57P03" });
    for (let i = 0; i < 40; i++) expect(await g.tryWith(refused)).toEqual({ failed: "held back" });
    g.advance(FIRST_DELAY_MS);
    expect(await g.tryWith(refused)).toEqual({ failed: "ECONNREFUSED" });
    expect(await g.tryWith(refused)).toEqual({ failed: "held back" });
    g.advance(MAX_DELAY_MS);
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
    expect(g.logger.lines.map(({ time: _, ...line }) => line)).toEqual([
      { level: "error", msg: "database not usable", problem: "DATABASE_UNAVAILABLE", cause: "the database system is shutting down", fix: expect.any(String) },
      { level: "info", msg: "database usable again", was: "DATABASE_UNAVAILABLE", unusable_ms: FIRST_DELAY_MS + MAX_DELAY_MS, answered_at_once: 41 },
    ]);
  });

  test("the requests answered at once are logged at info, the ones that tried at error", async () => {
    const { classify } = await import("../../src/failures.ts");
    const g = setup();
    const tried = await g.guard.run(() => Promise.reject(refused())).catch((err) => err);
    const heldBack = await g.guard.run(() => Promise.resolve("rows")).catch((err) => err);
    expect([classify(tried).level, classify(heldBack).level]).toEqual(["error", "info"]);
    expect([classify(tried).status, classify(heldBack).status]).toEqual([503, 503]);
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

describe("the serving reads' recent outcomes (issue 42: readiness said 200 while requests' reads failed)", () => {
  const timedOut = () => Object.assign(new Error("write CONNECT_TIMEOUT 127.0.0.1:5432"), { code: "CONNECT_TIMEOUT" });
  const reset = () => Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
  const badCast = () => new postgres.PostgresError({ code: "22008", message: "date out of range" } as never);

  test("three database failures that are a tenth of the last ten seconds' reads are trouble, named with the last cause", async () => {
    const g = setup();
    for (let i = 0; i < 20; i++) await g.tryWith(() => "rows");
    await g.tryWith(reset);
    await g.tryWith(reset);
    expect(g.guard.servingTrouble()).toBeUndefined(); // two of 22
    await g.tryWith(reset);
    const trouble = g.guard.servingTrouble();
    expect(trouble).toMatchObject({ code: "READS_FAILING", cause: "3 of the last 23 reads on the service's connections failed in 10 s (the last: read ECONNRESET)" });
    expect(trouble?.summary).not.toContain("ECONNRESET"); // /readyz answers anyone: no host or port
  });

  test("a success does not clear it, the window's end does; a share under a tenth is no trouble", async () => {
    const g = setup();
    for (let i = 0; i < 3; i++) {
      expect(await g.tryWith(timedOut)).toEqual({ failed: "CONNECT_TIMEOUT" });
      g.advance(MAX_DELAY_MS); // a connecting problem: the guard lets the next attempt through only then
    }
    expect(await g.tryWith(() => "rows")).toEqual({ ok: "rows" });
    expect(g.guard.servingTrouble()?.code).toBe("READS_FAILING");
    for (let i = 0; i < 26; i++) await g.tryWith(() => "rows");
    expect(g.guard.servingTrouble()?.code).toBe("READS_FAILING"); // 3 of 30
    await g.tryWith(() => "rows");
    expect(g.guard.servingTrouble()).toBeUndefined(); // 3 of 31
    g.advance(10_001);
    expect(g.guard.servingTrouble()).toBeUndefined();
  });

  test("readiness's own checks, a bad query and a client's failure are not counted", async () => {
    const g = setup();
    for (let i = 0; i < 5; i++) await g.guard.run(() => Promise.reject(reset()), "readiness").catch(() => {});
    for (let i = 0; i < 5; i++) await g.tryWith(badCast);
    for (let i = 0; i < 5; i++) await g.tryWith(() => new Error("the client closed the connection"));
    expect(g.guard.servingTrouble()).toBeUndefined();
  });
});
