// Misconfiguration as an operator makes it, against the compiled executable on a real
// PostgreSQL: a database nobody migrated, a role that may connect but not read, a wrong
// database name, and a DATABASE_URL that points at a server that is not PostgreSQL at all.
// Every request must get 503 DATABASE_UNAVAILABLE (never a 500), the log must name the
// cause and the fix, /readyz must say the same, and fixing the database must be enough: no
// restart. Against a peer that is not PostgreSQL, `migrate` must fail at once and `serve`
// must not open more than a few connections a second.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { isolatedBinary, startBinary, cleanEnv, type RunningBinary } from "../support/binary.ts";
import { SERVER_URL, testDatabase, type TestDatabase } from "../support/database.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("misconfiguration", () => {
  const KEY = "misconfiguration-key-41c7";
  const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
  const UNAVAILABLE = '{"detail":"DATABASE_UNAVAILABLE"}';
  const UNMIGRATED = `pce_unmigrated_${process.pid}`;
  const ROLE = `pce_noselect_${process.pid}`;

  let db: TestDatabase;
  let server: postgres.Sql;
  let bin: { dir: string; path: string };
  const running: RunningBinary[] = [];

  function urlWith(change: (u: URL) => void, base = SERVER_URL): string {
    const u = new URL(base);
    change(u);
    return u.toString();
  }

  async function start(databaseUrl: string, extra: Record<string, string> = {}): Promise<RunningBinary> {
    const s = await startBinary(bin.path, { DATABASE_URL: databaseUrl, PRODUCT_COST_API_KEYS: KEY, DB_CONNECT_TIMEOUT_MS: "2000", ...extra }, [], bin.dir);
    running.push(s);
    return s;
  }

  async function get(s: RunningBinary, path: string) {
    const res = await fetch(s.url + path, { headers: { authorization: `Bearer ${KEY}` } });
    return { status: res.status, body: await res.text() };
  }

  const readyz = async (s: RunningBinary) => {
    const res = await fetch(s.url + "/readyz");
    return { status: res.status, body: (await res.json()) as Record<string, string> };
  };

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`create database ${UNMIGRATED}`);
    await server.unsafe(`create role ${ROLE} login`);
    bin = isolatedBinary();
  }, 60_000);

  afterAll(async () => {
    for (const s of running) await s.stop("SIGKILL");
    await server.unsafe(`drop database if exists ${UNMIGRATED} with (force)`).catch(() => {});
    await db.admin.unsafe(`drop owned by ${ROLE}`).catch(() => {});
    await server.unsafe(`drop role if exists ${ROLE}`).catch(() => {});
    await server.end();
  }, 60_000);

  describe("a database the service cannot read answers 503 with the cause, and /readyz tells the truth", () => {
    test("without the ETL's tables (an empty database): the start-up line, each request and /readyz say so; `migrate` fixes it without a restart", async () => {
      const url = urlWith((u) => (u.pathname = `/${UNMIGRATED}`));
      const s = await start(url);
      const startup = await s.waitForLine((l) => l.msg === "database not usable");
      const fix =
        "the service reads the ETL's tables products and product_daily_costs: check that DATABASE_URL names the ETL's database; for a new database, or a rollup table dropped by hand, run `product-cost-export migrate` with a DATABASE_URL of the tables' owner";
      expect(startup).toMatchObject({ level: "error", problem: "MIGRATIONS_PENDING", cause: 'relation "product_daily_costs" does not exist', fix });

      expect(await get(s, JAN)).toEqual({ status: 503, body: UNAVAILABLE });
      // As during a `migrate` beside the service: 503 with Retry-After, never a 500.
      const again = await fetch(s.url + JAN, { headers: { authorization: `Bearer ${KEY}` } });
      expect([again.status, again.headers.get("retry-after"), await again.text()]).toEqual([503, "5", UNAVAILABLE]);
      const line = await s.waitForLine((l) => l.msg === "request" && l.path === "/external/v1/product-costs");
      // Not migrated: the daily rows are read, and they are not there either.
      expect(line).toMatchObject({ level: "error", status: 503, problem: "MIGRATIONS_PENDING", error_code: "42P01", source: "daily", fix });
      // (The read's first statement locks products, then product_daily_costs: products is the first it misses.)
      expect(String(line.error)).toBe('relation "products" does not exist');

      const ready = await readyz(s);
      expect(ready.status).toBe(503);
      expect(ready.body.detail).toBe("MIGRATIONS_PENDING");
      expect(ready.body.fix).toContain("product-cost-export migrate");

      // The refresh runs on this build's schema alone: it says what `migrate` would do, changes nothing, exit 1.
      const refresh = Bun.spawnSync([bin.path, "refresh"], { env: cleanEnv({ DATABASE_URL: url }), stdout: "pipe", stderr: "pipe" });
      expect({ code: refresh.exitCode, stderr: refresh.stderr.toString() }).toEqual({
        code: 1,
        stderr:
          "product-cost-export: cannot refresh: the database is not at this build's schema: `migrate` would apply 0001 (contract_tables), 0002 (daily_costs_by_date), " +
          "0003 (period_cost_rollup), 0004 (rollup_in_output_order), 0005 (rollup_v2), 0006 (rollup_v3), 0007 (answer_versions), 0008 (refresh_record), " +
          "0009 (answer_version_function), 0010 (single_row_notes), 0011 (months_by_month), 0012 (notes_of_any_date), 0013 (months_window), 0014 (notes_always), and then refresh; " +
          `nothing was refreshed; ${fix}\n`,
      });
      const unmigrated = postgres(url, { max: 1, onnotice: () => {} });
      const [tables] = await unmigrated.unsafe<{ n: number }[]>(`select count(*)::int as n from pg_tables where schemaname = 'public'`);
      await unmigrated.end();
      expect(tables!.n).toBe(0);
      const migrate = Bun.spawnSync([bin.path, "migrate"], { env: cleanEnv({ DATABASE_URL: url }), stdout: "pipe", stderr: "pipe" });
      expect(migrate.exitCode).toBe(0);
      expect(await get(s, JAN)).toEqual({ status: 200, body: "[]" });
      expect((await readyz(s)).status).toBe(200);
      expect(s.proc.exitCode).toBeNull();
    }, 60_000);

    test("a role that may connect but not SELECT: 503, a line that says to grant SELECT; the GRANT fixes it at once", async () => {
      const s = await start(urlWith((u) => (u.username = ROLE), db.url));
      expect(await get(s, JAN)).toEqual({ status: 503, body: UNAVAILABLE });
      // As during a `migrate` beside the service: 503 with Retry-After, never a 500.
      const again = await fetch(s.url + JAN, { headers: { authorization: `Bearer ${KEY}` } });
      expect([again.status, again.headers.get("retry-after"), await again.text()]).toEqual([503, "5", UNAVAILABLE]);
      const line = await s.waitForLine((l) => l.msg === "request" && l.path === "/external/v1/product-costs");
      expect(line).toMatchObject({ status: 503, problem: "PERMISSION_DENIED", error_code: "42501", source: "daily" });
      expect(String(line.error)).toBe("permission denied for table products");
      expect(String(line.fix)).toContain("SELECT");
      const ready = await readyz(s);
      expect({ status: ready.status, detail: ready.body.detail }).toEqual({ status: 503, detail: "PERMISSION_DENIED" });
      expect(ready.body.cause).toMatch(/^permission denied for table \w+$/);

      // SELECT on the ETL's two tables is enough: the daily rows are read (issue 44).
      await db.admin.unsafe(`grant select on products, product_daily_costs to ${ROLE}`);
      expect(await get(s, JAN)).toEqual({ status: 200, body: JANUARY_NORMAL });
      expect(await readyz(s)).toMatchObject({
        status: 200,
        body: { detail: "READY", source: "daily rows", why: "the role may not read product_cost_answers, product_cost_deltas, product_cost_folded_changes, product_cost_months, product_cost_refreshes, schema_migrations" },
      });
      // And on the rollup's: the rollup is read, at /readyz's check already.
      await db.admin.unsafe(`grant select on product_cost_months, product_cost_answers, product_cost_deltas, product_cost_refreshes, product_cost_folded_changes, schema_migrations to ${ROLE}`);
      expect(await readyz(s)).toMatchObject({ status: 200, body: { detail: "READY" } });
      expect((await readyz(s)).body.source).toBeUndefined();
      const rollup = await fetch(s.url + JAN, { headers: { authorization: `Bearer ${KEY}` } });
      expect([rollup.status, rollup.headers.has("etag"), await rollup.text()]).toEqual([200, true, JANUARY_NORMAL]);
      expect(await s.waitForLine((l) => l.msg === "reading the rollup")).toMatchObject({ level: "info", was: "the role may not read product_cost_answers, product_cost_deltas, product_cost_folded_changes, product_cost_months, product_cost_refreshes, schema_migrations" });
    }, 60_000);

    test("a database name that does not exist: 503 and DATABASE_NOT_FOUND, without the name on /readyz", async () => {
      const s = await start(urlWith((u) => (u.pathname = "/pce_no_such_database")));
      expect(await get(s, JAN)).toEqual({ status: 503, body: UNAVAILABLE });
      const notUsable = await s.waitForLine((l) => l.msg === "database not usable");
      expect(notUsable).toMatchObject({ problem: "DATABASE_NOT_FOUND", cause: 'database "pce_no_such_database" does not exist' });
      const ready = await readyz(s);
      expect(ready).toEqual({
        status: 503,
        body: { detail: "DATABASE_NOT_FOUND", cause: "the database named in DATABASE_URL does not exist", fix: "check the database name in DATABASE_URL" },
      });
    }, 60_000);
  });

  describe("a DATABASE_URL that points at a server that is not PostgreSQL", () => {
    /** An HTTP server that counts the connections it accepts. */
    function httpPeer() {
      let accepted = 0;
      const peer = Bun.listen({
        hostname: "127.0.0.1",
        port: 0,
        socket: {
          open: () => void accepted++,
          data: (socket) => void socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
        },
      });
      return { port: peer.port, accepted: () => accepted, stop: () => peer.stop(true) };
    }

    test("migrate exits 1 at once with a message that says so and what the peer sent", async () => {
      const peer = httpPeer();
      try {
        const started = performance.now();
        // Not spawnSync: the peer runs in this process and must answer meanwhile.
        const proc = Bun.spawn([bin.path, "migrate"], {
          env: cleanEnv({ DATABASE_URL: `postgres://postgres@127.0.0.1:${peer.port}/pce`, DB_CONNECT_TIMEOUT_MS: "3000" }),
          stdout: "pipe",
          stderr: "pipe",
        });
        const [exitCode, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
        const ms = performance.now() - started;
        expect(exitCode).toBe(1);
        expect(stderr).toBe(
          `product-cost-export: cannot migrate: the server at 127.0.0.1:${peer.port} is not a PostgreSQL server: ` +
            `it answered "HTTP/1.1 400 Bad Request Content-Length: 0 Connection: clo"; ` + // the first 60 bytes
            "DATABASE_URL's host and port belong to another kind of server: point it at PostgreSQL's (5432 by default)\n",
        );
        expect(ms).toBeLessThan(3000);
        expect(peer.accepted()).toBeLessThanOrEqual(2);
      } finally {
        peer.stop();
      }
    });

    test("serve answers 503 at once, says why, and opens no more than a few connections a second under load", async () => {
      const peer = httpPeer();
      try {
        const s = await start(`postgres://postgres@127.0.0.1:${peer.port}/pce`, { DB_POOL_MAX: "10" });
        const startup = await s.waitForLine((l) => l.msg === "database not usable");
        expect(startup).toMatchObject({ problem: "NOT_POSTGRESQL" });
        expect(String(startup.cause)).toContain('it answered "HTTP/1.1 400 Bad Request');
        const before = peer.accepted();
        // Eight clients in a loop for three seconds.
        const statuses = new Map<string, number>();
        const until = performance.now() + 3000;
        await Promise.all(
          Array.from({ length: 8 }, async () => {
            while (performance.now() < until) {
              const r = await get(s, JAN);
              const key = `${r.status} ${r.body}`;
              statuses.set(key, (statuses.get(key) ?? 0) + 1);
            }
          }),
        );
        const attempts = peer.accepted() - before;
        console.log(JSON.stringify({ not_postgresql: { requests: Object.fromEntries(statuses), connection_attempts_in_3_s: attempts } }));
        expect([...statuses.keys()]).toEqual([`503 ${UNAVAILABLE}`]);
        expect([...statuses.values()][0]).toBeGreaterThan(100);
        // The guard lets one probe through at most every 250 ms, then 500 ms, 1 s, 2 s.
        expect(attempts).toBeLessThanOrEqual(8);
        const ready = await readyz(s);
        expect(ready).toEqual({
          status: 503,
          body: {
            detail: "NOT_POSTGRESQL",
            cause: "the server at DATABASE_URL's host and port is not PostgreSQL",
            fix: "DATABASE_URL's host and port belong to another kind of server: point it at PostgreSQL's (5432 by default)",
          },
        });
        expect(s.proc.exitCode).toBeNull();
      } finally {
        peer.stop();
      }
    }, 60_000);
  });
});
