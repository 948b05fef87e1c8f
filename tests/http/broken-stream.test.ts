// A response that fails midway must never look complete: the database connection of a
// streaming read is killed for real (pg_terminate_backend) while the client holds the
// stream, and the client must see a broken transfer, not a shorter JSON array.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { isDatabaseUnavailable } from "../../src/database/errors.ts";
import { readProductCosts } from "../../src/reads/product-costs.ts";
import { KEY, testApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import {
  addManyRows,
  endsChunkedBody,
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

describeWithPostgres("a response that breaks midway", () => {
  const MANY = 30_000;
  let db: TestDatabase;
  const pools: Sql[] = [];
  let seq = 0;

  function pool(): { sql: Sql; name: string } {
    const name = `pce-broken-${process.pid}-${++seq}`;
    const sql = namedPool(db.url, name, { max: 1 });
    pools.push(sql);
    return { sql, name };
  }

  /** Kills the server process behind the pool's connection once its cursor is open. */
  async function killCursorSession(name: string): Promise<void> {
    await waitUntil("the cursor is open", async () => (await sessionsOf(db.admin, name)).some((s) => s.in_transaction));
    await db.admin`select pg_terminate_backend(pid) from pg_stat_activity where split_part(application_name, ' ', 1) = ${name}`;
    await waitUntil("the session is gone", async () => (await sessionsOf(db.admin, name)).length === 0);
  }

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await addManyRows(db.admin, MANY);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end({ timeout: 2 })));
  }, 30_000);

  test("the read reports a connection lost between batches instead of ending quietly", async () => {
    // postgres.js alone would answer {done: true} here: a short result that looks whole.
    const { sql, name } = pool();
    const { read } = await readProductCosts(sql, { monthFrom: MANY_FROM, monthTo: MANY_TO, segment: "normal" }, { batchSize: 100, firstBatchTimeoutMs: 30_000 });
    expect(read.first.length).toBe(100);
    await killCursorSession(name);
    let rows = read.first.length;
    let failure: unknown;
    try {
      for (let batch = await read.next(); batch; batch = await read.next()) rows += batch.length;
    } catch (err) {
      failure = err;
    }
    // CONNECTION_CLOSED or ECONNRESET, depending on how the socket went down.
    expect(isDatabaseUnavailable(failure)).toBe(true);
    expect(rows).toBeLessThan(MANY);
  });

  test("over HTTP: the client sees the connection cut without the last chunk, never a shorter valid array", async () => {
    const { sql, name } = pool();
    const app = testApp(sql, { batchSize: 100 });
    const server = serveOnSocket(app.handle);
    try {
      const client = rawExchange(server.port, rawGet(`month_from=${MANY_FROM}&month_to=${MANY_TO}`, KEY));
      await client.waitFor(64 * 1024);
      client.pause(); // the server's writes back up: the cursor stays suspended mid-answer
      await killCursorSession(name);
      client.resume();
      expect(await client.closed()).toBe(true);
      const raw = client.received();
      const head = raw.slice(0, raw.indexOf("\r\n\r\n")).toLowerCase();
      const body = raw.slice(raw.indexOf("\r\n\r\n") + 4).replace(/\r\n[0-9a-f]+\r\n/g, "");
      let parses = true;
      try {
        JSON.parse(body);
      } catch {
        parses = false;
      }
      expect({
        status: head.split("\r\n")[0],
        chunked: head.includes("transfer-encoding: chunked"),
        lastChunk: endsChunkedBody(raw),
        parses,
      }).toEqual({ status: "http/1.1 200 ok", chunked: true, lastChunk: false, parses: false });
      await waitUntil("the request is logged", () => app.logs.some((l) => l.msg === "request"));
      const line = app.logs.find((l) => l.msg === "request")!;
      // A body the server broke off is logged with the status its cause answers, never as the 200 that went out.
      expect(line).toMatchObject({ status: 503, status_sent: 200, level: "error" });
      expect(line.bytes).toBeGreaterThanOrEqual(64 * 1024);
      expect(isDatabaseUnavailable({ code: line.error_code })).toBe(true);
      expect(line.rows).toBeLessThan(MANY);
      // The pool replaced the killed connection: the next read is whole.
      const res = await app.get("/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31");
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    } finally {
      server.stop();
    }
  });

  test("with fetch(): reading the body fails instead of returning text", async () => {
    const { sql, name } = pool();
    const app = testApp(sql, { batchSize: 100 });
    const res = await app.get(`/external/v1/product-costs?month_from=${MANY_FROM}&month_to=${MANY_TO}`);
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    await reader.read(); // "[" and the first batch
    await killCursorSession(name);
    let completed = false;
    let failed = false;
    try {
      for (;;) if ((await reader.read()).done) break;
      completed = true;
    } catch {
      failed = true;
    }
    expect({ completed, failed }).toEqual({ completed: false, failed: true });
  });
});
