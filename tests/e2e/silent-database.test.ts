// A database that goes silent without closing anything (a network partition, a frozen proxy
// or NAT in between): against the compiled executable, through a TCP proxy of the test's
// own that stops forwarding in both directions and holds every connection open. A request
// in flight when the silence starts, and requests that arrive during it (on pooled
// connections that look idle and sound), are answered 503 DATABASE_UNAVAILABLE within about
// DB_CONNECT_TIMEOUT_MS, not after the statement timeout; answers come back when the proxy
// forwards again; and a query that is only slow, on a database that answers, is never cut
// before STATEMENT_TIMEOUT_MS.
import { afterAll, afterEach, beforeAll, expect, test } from "bun:test";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { holdLock, pausableProxy, waitUntil, type PausableProxy } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("a database that goes silent", () => {
  const KEY = "silent-database-key-51ac";
  const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
  const UNAVAILABLE = '{"detail":"DATABASE_UNAVAILABLE"}';
  const CONNECT_TIMEOUT_MS = 2000;
  // Long enough that an answer bounded by it is told apart from one bounded by the connect timeout.
  const STATEMENT_TIMEOUT_MS = 12_000;
  const BOUND_MS = CONNECT_TIMEOUT_MS + 2000;
  let db: TestDatabase;
  let proxy: PausableProxy;
  let server: RunningBinary;

  async function call() {
    const started = performance.now();
    const res = await fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}` } });
    return { status: res.status, body: await res.text(), ms: Math.round(performance.now() - started) };
  }

  /** The executable's sessions running a statement, as PostgreSQL (reached directly) sees them. */
  async function activeReads(): Promise<number> {
    const [row] = await db.admin<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity
      where datname = current_database() and split_part(application_name, ' ', 1) = 'product-cost-export' and state = 'active'`;
    return row!.n;
  }

  /** Resumes forwarding; the time until the service answers 200 again. */
  async function recovers() {
    proxy.resume();
    const started = performance.now();
    await waitUntil("the service answers 200 again", async () => (await call()).status === 200, 15_000);
    const after = await call();
    expect({ status: after.status, body: after.body }).toEqual({ status: 200, body: JANUARY_NORMAL });
    return Math.round(performance.now() - started);
  }

  // Each test starts from a database that speaks, even after one that failed midway.
  afterEach(async () => {
    if (proxy.paused()) await recovers().catch(() => {});
  }, 30_000);

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    proxy = await pausableProxy(Number(new URL(db.url).port || 5432));
    const viaProxy = new URL(db.url);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    const bin = isolatedBinary();
    server = await startBinary(
      bin.path,
      {
        DATABASE_URL: viaProxy.toString(),
        PRODUCT_COST_API_KEYS: KEY,
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
        STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DB_POOL_MAX: "4",
        ANSWER_CACHE_MB: "0", // every request reads the database
      },
      [],
      bin.dir,
    );
    await server.waitForLine((l) => l.msg === "database ready");
  }, 60_000);

  afterAll(async () => {
    proxy?.resume();
    await server?.stop("SIGKILL");
    proxy?.stop();
  }, 30_000);

  test("a request whose query is in flight when the database goes silent: 503 DATABASE_UNAVAILABLE within about DB_CONNECT_TIMEOUT_MS; 200 once it speaks again", async () => {
    expect((await call()).status).toBe(200);
    const release = await holdLock(db.admin); // the read waits on the server: in flight
    try {
      const pending = call();
      await waitUntil("the read runs on the server", async () => (await activeReads()) >= 1);
      const silentAt = performance.now();
      proxy.pause();
      const r = await pending;
      const ms = Math.round(performance.now() - silentAt);
      console.log(JSON.stringify({ in_flight: { status: r.status, ms_after_silence: ms } }));
      expect({ status: r.status, body: r.body, withinBound: ms < BOUND_MS }).toEqual({ status: 503, body: UNAVAILABLE, withinBound: true });
    } finally {
      await release();
    }
    console.log(JSON.stringify({ in_flight_recovered_ms: await recovers() }));
  }, 60_000);

  test("requests that arrive while the database is silent (its pooled connections look sound): each 503 within about DB_CONNECT_TIMEOUT_MS; 200 once it speaks again", async () => {
    // Idle pooled connections first: the next reads are written to them and wait.
    await Promise.all(Array.from({ length: 4 }, () => call()));
    proxy.pause();
    const results = [];
    for (let i = 0; i < 3; i++) results.push(await call());
    const concurrent = await Promise.all(Array.from({ length: 4 }, () => call()));
    results.push(...concurrent);
    console.log(JSON.stringify({ during_silence: results.map((r) => ({ status: r.status, ms: r.ms })) }));
    expect(results.map((r) => ({ status: r.status, body: r.body, withinBound: r.ms < BOUND_MS }))).toEqual(
      results.map(() => ({ status: 503, body: UNAVAILABLE, withinBound: true })),
    );
    expect((await fetch(server.url + "/readyz")).status).toBe(503);
    console.log(JSON.stringify({ during_silence_recovered_ms: await recovers() }));
    expect((await fetch(server.url + "/readyz")).status).toBe(200);
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);

  test("a read that is slow while the database answers is not cut at DB_CONNECT_TIMEOUT_MS: 200 with the whole answer", async () => {
    const release = await holdLock(db.admin);
    const pending = call();
    try {
      await waitUntil("the read waits on the lock", async () => (await activeReads()) >= 1);
      await Bun.sleep(CONNECT_TIMEOUT_MS * 2 + 1000);
    } finally {
      await release();
    }
    const r = await pending;
    console.log(JSON.stringify({ slow_but_alive: { status: r.status, ms: r.ms } }));
    expect({ status: r.status, body: r.body }).toEqual({ status: 200, body: JANUARY_NORMAL });
    expect(r.ms).toBeGreaterThan(CONNECT_TIMEOUT_MS * 2 + 1000);
  }, 60_000);
});
