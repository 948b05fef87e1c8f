// Timeouts and cancellation against a real PostgreSQL: a lock held by the test makes the
// service's read wait (a deterministic slow query), and pg_stat_activity shows whether the
// server-side statement was really cancelled and the cursor really closed.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { createAdmission } from "../../src/answer/answer-reads.ts";
import { createServiceMetrics } from "../../src/service/service-metrics.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import {
  addManyRows,
  busy,
  endsChunkedBody,
  holdLock,
  MANY_FROM,
  MANY_TO,
  namedPool,
  rawExchange,
  rawGet,
  serveOnSocket,
  sessionsOf,
  waitUntil,
} from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("timeouts and cancellation", () => {
  const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
  const UNAVAILABLE = '{"detail":"DATABASE_UNAVAILABLE"}';

  let db: TestDatabase;
  const pools: Sql[] = [];
  const servers: { stop(): void }[] = [];
  let seq = 0;

  function pool(options: { statementTimeoutMs?: number; max?: number } = {}): { sql: Sql; name: string } {
    const name = `pce-cancel-${process.pid}-${++seq}`;
    const sql = namedPool(db.url, name, options);
    pools.push(sql);
    return { sql, name };
  }

  const sessions = (name: string) => sessionsOf(db.admin, name);
  const waitingOnLock = async (name: string) => (await sessions(name)).some((s) => s.wait_event_type === "Lock");
  const allIdle = async (name: string) => (await sessions(name)).every((s) => !busy(s));
  const lastLog = async (app: TestApp) => {
    await waitUntil("the request is logged", () => app.logs.some((l) => l.msg === "request"));
    return app.logs.filter((l) => l.msg === "request").at(-1)!;
  };

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await addManyRows(db.admin, 30_000);
  }, 60_000);

  afterAll(async () => {
    servers.forEach((s) => s.stop());
    await Promise.all(pools.map((p) => p.end({ timeout: 2 })));
  }, 30_000);

  describe("statement timeout", () => {
    test("a statement over STATEMENT_TIMEOUT_MS answers 503 DATABASE_UNAVAILABLE and PostgreSQL cancels it", async () => {
      const { sql, name } = pool({ statementTimeoutMs: 500 });
      const app = testApp(sql);
      const unlock = await holdLock(db.admin);
      try {
        const started = performance.now();
        const res = await app.get(JAN);
        expect({ status: res.status, body: await res.text() }).toEqual({ status: 503, body: UNAVAILABLE });
        expect(performance.now() - started).toBeLessThan(10_000);
        expect(await lastLog(app)).toMatchObject({ status: 503, error_code: "57014" });
        // The lock is still held, so only the server's cancel can have ended the wait.
        await waitUntil("the statement is gone from pg_stat_activity", () => allIdle(name));
      } finally {
        await unlock();
      }
    });

    test("the service's own first-answer deadline also cancels the statement on the server", async () => {
      const { sql, name } = pool({ statementTimeoutMs: 60_000 });
      const app = testApp(sql, { firstBatchTimeoutMs: 700 });
      const unlock = await holdLock(db.admin);
      try {
        const answer = app.get(JAN);
        await waitUntil("the read waits on the lock", () => waitingOnLock(name));
        const res = await answer;
        expect({ status: res.status, body: await res.text() }).toEqual({ status: 503, body: UNAVAILABLE });
        expect(await lastLog(app)).toMatchObject({ status: 503, error_code: "DATABASE_DEADLINE" });
        await waitUntil("the cancelled statement is gone while the lock is still held", () => allIdle(name));
      } finally {
        await unlock();
      }
      // The cancel was consumed by that statement: the connection serves the next read.
      const res = await app.get(JAN);
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    });
  });

  describe("a cancel the read did not ask for", () => {
    test("is retried once on a fresh statement (a late cancel meant for an earlier query, or pg_cancel_backend)", async () => {
      const { sql, name } = pool();
      const app = testApp(sql);
      const unlock = await holdLock(db.admin);
      let answer: Promise<Response> | undefined;
      try {
        answer = app.get(JAN);
        await waitUntil("the read waits on the lock", () => waitingOnLock(name));
        const [waiting] = (await sessions(name)).filter((s) => s.wait_event_type === "Lock");
        await db.admin`select pg_cancel_backend(${waiting!.pid})`;
        await waitUntil("the retry waits on the lock again", () => waitingOnLock(name));
      } finally {
        await unlock();
      }
      const res = await answer!;
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    });
  });

  describe("a client that goes away", () => {
    test("while its query waits: the query is cancelled on the server", async () => {
      const { sql, name } = pool();
      const app = testApp(sql);
      const server = serveOnSocket(app.handle);
      servers.push(server);
      const unlock = await holdLock(db.admin);
      try {
        const client = rawExchange(server.port, rawGet("month_from=2024-01-01&month_to=2024-01-31", KEY));
        await waitUntil("the read waits on the lock", () => waitingOnLock(name));
        client.destroy();
        await waitUntil("the abandoned statement is cancelled while the lock is still held", () => allIdle(name));
        const line = await lastLog(app);
        // A client that leaves is no error of ours: 499 at info, no cause.
        expect(line).toMatchObject({ status: 499, level: "info" });
        expect(line.error_code).toBeUndefined();
      } finally {
        await unlock();
      }
    });

    test("mid-response: the cursor is closed and the only pool connection is free again", async () => {
      const { sql, name } = pool({ max: 1 });
      const app = testApp(sql, { batchSize: 100 });
      const server = serveOnSocket(app.handle);
      servers.push(server);
      const client = rawExchange(server.port, rawGet(`month_from=${MANY_FROM}&month_to=${MANY_TO}`, KEY));
      await client.waitFor(64 * 1024);
      client.pause();
      await waitUntil("the cursor is open (suspended in its transaction)", async () => (await sessions(name)).some((s) => s.in_transaction));
      client.destroy();
      await waitUntil("the cursor is closed and its transaction ended", () => allIdle(name));
      // Logged as nginx logs it: 499 (client closed request) at info, with the bytes that went out.
      const line = await lastLog(app);
      expect(line).toMatchObject({ status: 499, status_sent: 200, level: "info" });
      expect(line.bytes).toBeGreaterThanOrEqual(64 * 1024);
      expect(line.error).toBeUndefined();
      const res = await app.get(JAN);
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    });
  });

  describe("whole-request timeout (REQUEST_TIMEOUT_MS)", () => {
    const admission = () => createAdmission({ maxConcurrent: 2, maxQueued: 10, queueTimeoutMs: 10_000 });

    test("before the first byte: 503 DATABASE_UNAVAILABLE, the statement is cancelled, counted as a request timeout (not a database one)", async () => {
      const { sql, name } = pool({ statementTimeoutMs: 60_000 });
      const metrics = createServiceMetrics({ version: "v", commit: "c" });
      const app = testApp(sql, { firstBatchTimeoutMs: 60_000, admission: admission(), requestTimeoutMs: 700, metrics });
      const unlock = await holdLock(db.admin);
      try {
        const res = await app.get(JAN);
        expect({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() }).toEqual({ status: 503, retryAfter: "5", body: UNAVAILABLE });
        expect(await lastLog(app)).toMatchObject({ status: 503, level: "error", error_code: "REQUEST_TIMEOUT" });
        const text = await metrics.render();
        expect(text).toContain('product_cost_export_database_errors_total{kind="timeout"} 0\n');
        expect(text).toContain("product_cost_export_request_timeouts_total 1\n");
        await waitUntil("the statement is cancelled while the lock is still held", () => allIdle(name));
      } finally {
        await unlock();
      }
      // The scrape reads readiness too (issue 46), whose probe waits on the lock until its own 2 s deadline.
    }, 15_000);

    test("mid-response: a reader too slow for the deadline gets a broken transfer and the cursor is closed", async () => {
      const { sql, name } = pool();
      const slots = admission();
      const app = testApp(sql, { batchSize: 100, admission: slots, requestTimeoutMs: 1500 });
      const server = serveOnSocket(app.handle);
      servers.push(server);
      const client = rawExchange(server.port, rawGet(`month_from=${MANY_FROM}&month_to=${MANY_TO}`, KEY));
      await client.waitFor(64 * 1024);
      client.pause();
      await waitUntil("the cursor is open", async () => (await sessions(name)).some((s) => s.in_transaction));
      await waitUntil("the deadline closed the cursor", () => allIdle(name));
      // The read's slot is free although the client has not read on: it holds only its socket.
      await waitUntil("the slot is free", () => slots.stats().running === 0);
      client.resume();
      expect(await client.closed()).toBe(true);
      const raw = client.received();
      expect(raw.startsWith("HTTP/1.1 200 OK\r\n")).toBe(true);
      expect(endsChunkedBody(raw)).toBe(false);
      expect(await lastLog(app)).toMatchObject({ status: 503, status_sent: 200, level: "error", error_code: "REQUEST_TIMEOUT" });
    });

    test("counted from arrival, not from the body's start: a request that waited most of it gets only the rest for its body", async () => {
      // 6 s in all; the read waits 3 s on a lock before its first row, then the client stops
      // reading. From arrival the transfer is cut about 6 s after arrival; a deadline started
      // with the body would cut it 6 s after the lock's release, 9 s after arrival at the least.
      const TIMEOUT_MS = 6000;
      const WAIT_MS = 3000;
      const { sql, name } = pool();
      const metrics = createServiceMetrics({ version: "v", commit: "c" });
      const app = testApp(sql, { batchSize: 100, admission: admission(), requestTimeoutMs: TIMEOUT_MS, metrics });
      const server = serveOnSocket(app.handle);
      servers.push(server);
      const unlock = await holdLock(db.admin);
      let client: ReturnType<typeof rawExchange>;
      try {
        client = rawExchange(server.port, rawGet(`month_from=${MANY_FROM}&month_to=${MANY_TO}`, KEY));
        // Seen waiting: it has arrived, so the lock is released WAIT_MS after arrival at the least.
        await waitUntil("the read waits on the lock", () => waitingOnLock(name));
        await Bun.sleep(WAIT_MS);
      } finally {
        await unlock();
      }
      await client.waitFor(64 * 1024);
      client.pause();
      const line = await lastLog(app);
      expect(line).toMatchObject({ status: 503, status_sent: 200, level: "error", error_code: "REQUEST_TIMEOUT" });
      // duration_ms counts from arrival. Timers fire late on a busy machine, never early.
      expect(line.duration_ms as number).toBeGreaterThanOrEqual(TIMEOUT_MS);
      expect(line.duration_ms as number).toBeLessThan(TIMEOUT_MS + 2000);
      expect(await metrics.render()).toContain("product_cost_export_request_timeouts_total 1\n");
      // The body had started (a 200 went out) and is cut, never ended as if whole.
      client.resume();
      expect(await client.closed()).toBe(true);
      const raw = client.received();
      expect(raw.startsWith("HTTP/1.1 200 OK\r\n")).toBe(true);
      expect(endsChunkedBody(raw)).toBe(false);
      await waitUntil("the cursor is closed", () => allIdle(name));
    }, 60_000);
  });
});
