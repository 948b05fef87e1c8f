// Clients that vanish in the middle of a large streamed answer, with one pool connection:
// whatever state the abandoned read leaves on that connection must not reach the reads
// after it (postgres.js kept the aborted query's row count, so the next query's rows landed
// after a run of holes: "undefined is not an object", batches above the batch size).
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { KEY, testApp } from "../support/app.ts";
import { testDatabase } from "../support/database.ts";
import { addManyRows, MANY_FROM, MANY_TO, namedPool, rawExchange, rawGet, serveOnSocket } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("aborted streams", () => {
  const ROWS = 20_000;
  let sql: Sql;
  let server: { port: number; url: string; stop(): void };
  let app: ReturnType<typeof testApp>;

  beforeAll(async () => {
    const db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await addManyRows(db.admin, ROWS);
    sql = namedPool(db.url, `pce-aborted-${process.pid}`, { max: 1 });
    app = testApp(sql, { batchSize: 2000 });
    server = serveOnSocket(app.handle);
  }, 60_000);

  afterAll(async () => {
    server?.stop();
    await sql?.end({ timeout: 2 });
  }, 30_000);

  test("60 transfers reset mid-stream (after 1 byte or 256 KB) leave the only connection sound: 20 whole reads follow, nothing logged as an error", async () => {
    const query = `month_from=${MANY_FROM}&month_to=${MANY_TO}`;
    for (let i = 0; i < 60; i++) {
      const client = rawExchange(server.port, rawGet(query, KEY));
      await client.waitFor(i % 2 === 0 ? 1 : 256 * 1024);
      client.reset();
    }
    const answers: { status: number; rows: number | string }[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`${server.url}/external/v1/product-costs?${query}`, { headers: { authorization: `Bearer ${KEY}` } });
      const text = await res.text();
      let rows: number | string;
      try {
        rows = (JSON.parse(text) as unknown[]).length;
      } catch {
        rows = `not JSON: ${text.slice(0, 80)}`;
      }
      answers.push({ status: res.status, rows });
    }
    expect(answers).toEqual(Array.from({ length: 20 }, () => ({ status: 200, rows: ROWS })));
    expect(app.logs.filter((l) => l.level === "error").slice(0, 3)).toEqual([]);
  }, 120_000);
});
