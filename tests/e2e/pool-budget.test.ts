// DB_POOL_MAX is the limit on the service's sessions, readiness included, and readiness has
// a session of its own within it: a pool full of reads makes new reads wait (then 503
// OVERLOADED), never /readyz fail. Against the compiled executable on a real PostgreSQL,
// with clients that stop reading a large answer (read-ahead off, so each holds its
// connection) and pg_stat_activity counting the sessions.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { addManyRows, MANY_FROM, MANY_TO, rawExchange, rawGet, waitUntil, type RawExchange } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("the pool budget", () => {
  const KEY = "pool-budget-key-9e31";
  const POOL_MAX = 3;
  let db: TestDatabase;
  let server: RunningBinary;
  const clients: RawExchange[] = [];

  /** The executable's sessions on the test database, as PostgreSQL counts them. */
  async function sessions(): Promise<{ total: number; reading: number }> {
    const [row] = await db.admin<{ total: number; reading: number }[]>`
      select count(*)::int as total, count(*) filter (where xact_start is not null)::int as reading
      from pg_stat_activity where datname = current_database() and split_part(application_name, ' ', 1) = 'product-cost-export'`;
    return row!;
  }

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    // About 18 MB of JSON per answer: more than the socket buffers hold, so a paused client holds its cursor.
    await addManyRows(db.admin, 100_000);
    const bin = isolatedBinary();
    server = await startBinary(
      bin.path,
      {
        DATABASE_URL: db.url,
        PRODUCT_COST_API_KEYS: KEY,
        DB_POOL_MAX: String(POOL_MAX),
        RESPONSE_BUFFER_MB: "0", // each slow client holds its connection
        REQUEST_QUEUE_TIMEOUT_MS: "300",
      },
      [],
      bin.dir,
    );
    await server.waitForLine((l) => l.msg === "database ready");
  }, 60_000);

  afterAll(async () => {
    clients.forEach((c) => c.destroy());
    await server?.stop();
  }, 30_000);

  test("with every read connection held by a slow client: new reads 503 OVERLOADED, /readyz READY, at most DB_POOL_MAX sessions", async () => {
    const overloaded = async () => {
      const res = await fetch(`${server.url}/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31`, { headers: { authorization: `Bearer ${KEY}` } });
      return { status: res.status, body: await res.text() };
    };
    // Slow clients until the pool is full: each holds a suspended cursor.
    for (let held = 0; held < POOL_MAX; held++) {
      const client = rawExchange(Number(new URL(server.url).port), rawGet(`month_from=${MANY_FROM}&month_to=${MANY_TO}`, KEY, "Accept-Encoding: identity\r\n"));
      clients.push(client);
      await client.waitFor(64 * 1024);
      client.pause();
      await waitUntil(`${held + 1} reads hold their connections`, async () => (await sessions()).reading >= held + 1);
      const next = await overloaded();
      if (next.status === 503) {
        expect(next.body).toBe('{"detail":"OVERLOADED"}');
        break;
      }
    }
    const readsHeld = (await sessions()).reading;
    // One session of DB_POOL_MAX is readiness's own.
    expect(readsHeld).toBe(POOL_MAX - 1);
    const started = performance.now();
    const ready = await fetch(`${server.url}/readyz`);
    // READY (a rollup lag may be named beside it: this file's 100,000 rows wait for a refresh
    // unless another file of the run refreshed since, which made the test fail when run alone).
    expect({ status: ready.status, detail: ((await ready.json()) as { detail: string }).detail }).toEqual({ status: 200, detail: "READY" });
    expect(performance.now() - started).toBeLessThan(1500);
    expect((await sessions()).total).toBeLessThanOrEqual(POOL_MAX);

    clients.splice(0).forEach((c) => c.destroy());
    await waitUntil("the slow clients' reads are closed", async () => (await sessions()).reading === 0);
    expect(await overloaded()).toEqual({ status: 200, body: JANUARY_NORMAL });
  }, 60_000);
});
