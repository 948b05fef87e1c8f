// Overload: a bounded number of reads, a bounded queue, 503 OVERLOADED with Retry-After
// past it; the optional per-key rate limit, 429 RATE_LIMITED with Retry-After, only ever
// after authentication. The reads are held up for real by a lock on the products table.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { createAdmission } from "../../src/answer/answer-reads.ts";
import { createRateLimiter } from "../../src/key/rate-limit.ts";
import { KEY, OTHER_KEY, ring, testApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { holdLock, namedPool, sessionsOf, waitUntil } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("overload", () => {
  const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
  const OVERLOADED = '{"detail":"OVERLOADED"}';
  const RATE_LIMITED = '{"detail":"RATE_LIMITED"}';

  let db: TestDatabase;
  let sql: Sql;
  const NAME = `pce-overload-${process.pid}`;

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    sql = namedPool(db.url, NAME, { max: 2 });
  }, 60_000);

  afterAll(async () => {
    await sql.end({ timeout: 2 });
  }, 30_000);

  const answer = async (res: Response | Promise<Response>) => {
    const r = await res;
    return { status: r.status, retryAfter: r.headers.get("retry-after"), body: await r.text() };
  };

  describe("bounded reads and queue", () => {
    test("past DB_POOL_MAX running and REQUEST_QUEUE_MAX waiting: 503 OVERLOADED with Retry-After, at once", async () => {
      const admission = createAdmission({ maxConcurrent: 2, maxQueued: 2, queueTimeoutMs: 30_000 });
      const app = testApp(sql, { admission });
      const unlock = await holdLock(db.admin);
      let admitted: Promise<{ status: number; body: string }>[] = [];
      try {
        admitted = [1, 2, 3, 4].map(() => answer(app.get(JAN)));
        // Two hold the slots, both waiting for the one version read they share (held by the lock); two queue.
        await waitUntil("a read waits on the lock, two requests hold the slots and two queue", async () => {
          const waiting = (await sessionsOf(db.admin, NAME)).filter((s) => s.wait_event_type === "Lock").length;
          return waiting === 1 && admission.stats().running === 2 && admission.stats().queued === 2;
        });
        expect(await answer(app.get(JAN))).toEqual({ status: 503, retryAfter: "1", body: OVERLOADED });
        expect(admission.stats()).toMatchObject({ running: 2, queued: 2 });
      } finally {
        await unlock();
      }
      // Nothing admitted was lost: all four get the whole answer once the lock is gone.
      for (const r of await Promise.all(admitted)) expect(r).toMatchObject({ status: 200, body: JANUARY_NORMAL });
      expect(admission.stats()).toMatchObject({ running: 0, queued: 0 });
    });

    test("a request that waits longer than REQUEST_QUEUE_TIMEOUT_MS gets 503 OVERLOADED", async () => {
      const admission = createAdmission({ maxConcurrent: 1, maxQueued: 10, queueTimeoutMs: 300 });
      const app = testApp(sql, { admission });
      const unlock = await holdLock(db.admin);
      let first: Promise<{ status: number; body: string }> | undefined;
      try {
        first = answer(app.get(JAN));
        await waitUntil("the first read holds the only slot", () => admission.stats().running === 1);
        expect(await answer(app.get(JAN))).toEqual({ status: 503, retryAfter: "1", body: OVERLOADED });
      } finally {
        await unlock();
      }
      expect(await first).toMatchObject({ status: 200, body: JANUARY_NORMAL });
    });

    test("a burst of 2,000 requests costs a bounded queue, not 2,000 waiting reads", async () => {
      const admission = createAdmission({ maxConcurrent: 2, maxQueued: 20, queueTimeoutMs: 60_000 });
      const app = testApp(sql, { admission });
      const unlock = await holdLock(db.admin);
      const statuses = new Map<number, number>();
      let all: Promise<void>[] = [];
      try {
        all = Array.from({ length: 2000 }, () =>
          answer(app.get(JAN)).then((r) => void statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1)),
        );
        // Everything beyond 2 running + 20 queued is answered while the lock is still held.
        await waitUntil("the overflow is answered", () => (statuses.get(503) ?? 0) === 1978);
        expect(admission.stats()).toMatchObject({ running: 2, queued: 20 });
      } finally {
        await unlock();
      }
      await Promise.all(all);
      expect(Object.fromEntries(statuses)).toEqual({ 200: 22, 503: 1978 });
    });

    test("a client that gives up while queued leaves the queue", async () => {
      const admission = createAdmission({ maxConcurrent: 1, maxQueued: 5, queueTimeoutMs: 60_000 });
      const app = testApp(sql, { admission });
      const unlock = await holdLock(db.admin);
      try {
        const first = app.get(JAN);
        await waitUntil("the first read holds the only slot", () => admission.stats().running === 1);
        const gone = new AbortController();
        const queued = app.handle(new Request(`http://localhost${JAN}`, { headers: { authorization: `Bearer ${KEY}` }, signal: gone.signal }));
        await waitUntil("the second one waits", () => admission.stats().queued === 1);
        gone.abort();
        expect((await queued).status).toBe(499);
        expect(admission.stats()).toMatchObject({ running: 1, queued: 0 });
        await unlock();
        expect((await first).status).toBe(200);
      } finally {
        await unlock();
      }
    });
  });

  describe("per-key rate limit (RATE_LIMIT_PER_MINUTE)", () => {
    test("over the limit: 429 RATE_LIMITED with Retry-After; other keys are not affected", async () => {
      const app = testApp(sql, { keys: ring(KEY, OTHER_KEY), rateLimiter: createRateLimiter(3) });
      for (let i = 0; i < 3; i++) expect((await answer(app.get(JAN))).status).toBe(200);
      const limited = await answer(app.get(JAN));
      expect(limited).toMatchObject({ status: 429, body: RATE_LIMITED });
      // 3 a minute: the next request is allowed 20 s later.
      expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(19);
      expect(Number(limited.retryAfter)).toBeLessThanOrEqual(20);
      expect((await answer(app.get(JAN, { authorization: `Bearer ${OTHER_KEY}` }))).status).toBe(200);
    });

    test("an unauthenticated caller gets 401, never 429, even while the key is limited", async () => {
      const app = testApp(sql, { rateLimiter: createRateLimiter(1) });
      expect((await answer(app.get(JAN))).status).toBe(200);
      expect((await answer(app.get(JAN))).status).toBe(429);
      for (const headers of [{}, { authorization: "Bearer wrong" }, { authorization: `Basic ${KEY}` }] as Record<string, string>[]) {
        expect(await answer(app.get(JAN, headers))).toEqual({ status: 401, retryAfter: null, body: '{"detail":"INVALID_API_KEY"}' });
      }
    });

    test("every answer to a limited key says its allowance: RateLimit-Policy and RateLimit (IETF), a 429 with r=0 and Retry-After", async () => {
      let now = 0;
      const app = testApp(sql, { keys: ring(KEY, OTHER_KEY), rateLimiter: createRateLimiter(3, () => now) });
      const allowance = async (headers?: Record<string, string>) => {
        const res = await app.get(JAN, headers);
        await res.arrayBuffer();
        return { status: res.status, policy: res.headers.get("ratelimit-policy"), left: res.headers.get("ratelimit"), retryAfter: res.headers.get("retry-after") };
      };
      // 3 a minute: one request back every 20 s; the allowance is whole again 20 s after each.
      expect(await allowance()).toEqual({ status: 200, policy: '"per-key";q=3;w=60', left: '"per-key";r=2;t=20', retryAfter: null });
      expect(await allowance()).toEqual({ status: 200, policy: '"per-key";q=3;w=60', left: '"per-key";r=1;t=40', retryAfter: null });
      now += 10_000;
      expect(await allowance()).toEqual({ status: 200, policy: '"per-key";q=3;w=60', left: '"per-key";r=0;t=50', retryAfter: null });
      expect(await allowance()).toEqual({ status: 429, policy: '"per-key";q=3;w=60', left: '"per-key";r=0;t=50', retryAfter: "10" });
      // Another key has its own; a caller without a key is told nothing of any.
      expect(await allowance({ authorization: `Bearer ${OTHER_KEY}` })).toMatchObject({ status: 200, left: '"per-key";r=2;t=20' });
      expect(await allowance({ authorization: "Bearer wrong" })).toEqual({ status: 401, policy: null, left: null, retryAfter: null });
      // Without a limit, no such header.
      const unlimited = await testApp(sql).get(JAN);
      await unlimited.arrayBuffer();
      expect([unlimited.headers.get("ratelimit"), unlimited.headers.get("ratelimit-policy")]).toEqual([null, null]);
    });

    test("the allowance refills evenly over the minute", () => {
      let now = 0;
      const limiter = createRateLimiter(60, () => now);
      for (let i = 0; i < 60; i++) limiter.take("k");
      expect(() => limiter.take("k")).toThrow(
        expect.objectContaining({ status: 429, headers: { "retry-after": "1", "ratelimit-policy": '"per-key";q=60;w=60', ratelimit: '"per-key";r=0;t=60' } }),
      );
      now += 1000; // one second = one request at 60 a minute
      limiter.take("k");
      expect(() => limiter.take("k")).toThrow(expect.objectContaining({ status: 429 }));
      now += 60_000; // a quiet minute refills the whole burst, not more
      for (let i = 0; i < 60; i++) limiter.take("k");
      expect(() => limiter.take("k")).toThrow(expect.objectContaining({ status: 429 }));
    });

    test("a key idle for an hour may burst its limit once, never an hour's worth", () => {
      let now = 0;
      const limiter = createRateLimiter(60, () => now);
      limiter.take("k");
      now += 3_600_000;
      for (let i = 0; i < 60; i++) limiter.take("k");
      expect(() => limiter.take("k")).toThrow(expect.objectContaining({ status: 429 }));
    });
  });
});
