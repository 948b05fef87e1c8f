// The service's own refresh (REFRESH_DATABASE_URL, src/rollup/background-refresh.ts): two
// instances fold at once beside writers and a reader, take turns under the advisory lock,
// and every answer stays the GROUP BY's at its snapshot; the log is folded away by the
// end. A role that may only read gets a line naming the owner's URL as the fix, and the
// service's reads go on. Seeded like the property test.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { startBackgroundRefresh } from "../../src/rollup/background-refresh.ts";
import { createPool, type Sql as Pool } from "../../src/database/client.ts";
import { productCostsStatement } from "../../src/reads/product-costs.ts";
import { REFRESH_LOCK_ID, refreshRollup } from "../../src/rollup/refresh.ts";
import { servicePool, testDatabase, type TestDatabase } from "../support/database.ts";
import { waitUntil } from "../support/faults.ts";
import { memoryLogger } from "../support/memory-logger.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bulkLoad, loadProducts, prng, randomRange, randomRows, randomWrite, SEGMENTS, type Sql } from "../support/random-writes.ts";
import { monthsDrift, naiveAnswer, rowsAsJson } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

const SEED = testSeed("background refresh test");

describeWithPostgres("the service's own refresh", () => {
  let db: TestDatabase;
  let service: Pool;
  beforeAll(async () => {
    db = await testDatabase();
    service = await servicePool();
  });
  afterAll(async () => {
    await service.end({ timeout: 5 });
  });

  test("two instances fold at once beside writers and a reader: every read exact at its snapshot, the log folded at the end", async () => {
    const r = prng(SEED);
    await db.admin`truncate product_daily_costs, products`;
    await loadProducts(db.admin, r);
    await bulkLoad(db.admin, randomRows(r, 800), true);
    const loggers = [memoryLogger(), memoryLogger()];
    const instances = loggers.map((logger) => startBackgroundRefresh({ url: db.url, intervalMs: 20, connectTimeoutMs: 5000, logger }));
    const writers = createPool({ url: db.url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: false, applicationName: "pce-bg-writers" });
    const failures: string[] = [];
    let writing = true;
    let reads = 0;
    try {
      // Fifteen writes each, and on (up to 200) until the reader has read beside them: on a busy
      // machine the writes alone may end before the reader's sixth read.
      const writerLoops = Array.from({ length: 3 }, async (_, w) => {
        const wr = prng(SEED ^ (0x2000 + w));
        for (let i = 0; i < 15 || (reads <= 5 && i < 200); i++) {
          try {
            await randomWrite(writers, wr, false);
          } catch (err) {
            const code = (err as { code?: string }).code;
            if (!["40001", "40P01", "23505", "23503"].includes(code ?? "")) failures.push(`writer ${w}: ${String(err)}`);
          }
        }
      });
      const reader = (async () => {
        const rr = prng(SEED ^ 0xbeef);
        while (writing) {
          const [from, to] = randomRange(rr);
          const segment = rr.pick(SEGMENTS);
          await service.begin("isolation level repeatable read", async (tx) => {
            await tx`lock table product_daily_costs, products, product_cost_months, product_cost_answers, product_cost_deltas in access share mode`;
            const statement = productCostsStatement({ monthFrom: from, monthTo: to, segment });
            const answer = rowsAsJson(await tx.unsafe(statement.text, statement.params).raw());
            const expected = await naiveAnswer(tx as unknown as Sql, from, to, segment);
            if (answer !== expected) failures.push(`read ${from}..${to} ${segment}: ${answer.slice(0, 200)} != ${expected.slice(0, 200)}`);
          });
          reads++;
        }
      })();
      await Promise.all(writerLoops);
      writing = false;
      await reader;
      expect(reads).toBeGreaterThan(5);

      // The turns go on after the writes: the log is folded away, and each instance has had a
      // turn that refreshed (on a busy machine the writes may all end within the other's turns).
      await waitUntil("the log folded", async () => (await db.admin<{ n: number }[]>`select count(*)::int as n from product_cost_deltas`)[0]!.n === 0, 20_000);
      await waitUntil("both instances refreshed", async () => loggers.every((l) => l.lines.some((line) => line.msg === "refreshed")), 20_000);
    } finally {
      writing = false;
      await Promise.all(instances.map((i) => i.stop()));
      await writers.end({ timeout: 5 });
    }
    expect({ seed: SEED, failures: failures.slice(0, 5) }).toEqual({ seed: SEED, failures: [] });
    // Both took turns (which one folds a given change is a race) and the changes were folded.
    for (const logger of loggers) expect(logger.lines.filter((l) => l.msg === "refreshed").length).toBeGreaterThan(0);
    expect(loggers.flatMap((l) => l.lines).some((l) => l.msg === "refreshed" && l.mode !== "none")).toBe(true);
    expect(loggers.flatMap((l) => l.lines).filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    expect({ seed: SEED, drift: await monthsDrift(db.admin) }).toEqual({ seed: SEED, drift: [] });
  }, 120_000);

  test("a turn that finds a refresh running (another instance, the timer) skips it instead of waiting; the next folds", async () => {
    // Nothing left waiting by the test before (a TRUNCATE's note would make the next fold a rebuild).
    await refreshRollup(db.admin);
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd)
                   select p.product_id, '2024-04-03', 1 from products p on conflict do nothing`;
    const other = await db.admin.reserve();
    await other`select pg_advisory_lock(${REFRESH_LOCK_ID})`;
    const logger = memoryLogger();
    const instance = startBackgroundRefresh({ url: db.url, intervalMs: 20, connectTimeoutMs: 5000, logger });
    try {
      await waitUntil("two skipped turns", () => logger.lines.filter((l) => l.msg === "refresh skipped: another refresh is running").length >= 2);
      expect(logger.lines.filter((l) => l.msg === "refreshed")).toEqual([]);
      await other`select pg_advisory_unlock(${REFRESH_LOCK_ID})`;
      // Seen once in CI (2026-12-02, seed 1810096062, not again in 20 runs): no fold within 15 s.
      // Its lines, then, say what the turns did instead.
      const folded = () => logger.lines.some((l) => l.msg === "refreshed" && l.mode === "changes");
      await waitUntil("a fold", folded).catch(async (err) => {
        const lines = logger.lines.filter((l) => l.msg !== "refresh skipped: another refresh is running");
        const notes = (await db.admin<{ n: number }[]>`select count(*)::int as n from product_cost_deltas`)[0]!.n;
        throw new Error(`${(err as Error).message}; notes waiting ${notes}; the turns' other lines: ${JSON.stringify(lines.slice(0, 5))}`);
      });
    } finally {
      other.release();
      await instance.stop();
    }
    expect(logger.lines.find((l) => l.msg === "refreshed" && l.mode === "changes")).toMatchObject({ level: "info", by: "service" });
  });

  test("a URL of a role that may only read: each turn logs the cause and the owner's URL as the fix; the refresh by hand still folds", async () => {
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd)
                   select p.product_id, '2024-04-04', 1 from products p on conflict do nothing`;
    // The serving role's kind of URL: SELECT on the tables, nothing more.
    const role = `pce_bg_reader_${process.pid}`;
    await db.admin.unsafe(`drop role if exists ${role}`);
    await db.admin.unsafe(`create role ${role} login; grant select on all tables in schema public to ${role}`);
    const url = new URL(db.url);
    url.username = role;
    const logger = memoryLogger();
    const instance = startBackgroundRefresh({ url: url.toString(), intervalMs: 20, connectTimeoutMs: 5000, logger });
    try {
      await waitUntil("a failed turn", () => logger.lines.some((l) => l.msg === "background refresh failed"), 10_000);
    } finally {
      await instance.stop();
      await db.admin.unsafe(`drop owned by ${role}; drop role ${role}`);
    }
    expect(logger.lines.find((l) => l.msg === "background refresh failed")).toMatchObject({
      level: "warn",
      problem: "PERMISSION_DENIED",
      cause: expect.stringMatching(/^permission denied for table product_cost_/),
      fix: "the refresh writes the rollup tables: give it a URL of the tables' owner (the one `migrate` uses), not the serving role's",
      retry_in_ms: 20,
    });
    expect((await refreshRollup(db.admin))?.mode).toBe("changes");
  });
});
