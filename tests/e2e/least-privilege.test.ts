// Least privilege and defence in depth, for real: the service's sessions are read-only
// (default_transaction_read_only), the executable runs with a role that may only SELECT the
// tables it reads, and SQL injection attempts in every parameter and header leave the
// tables untouched, even when the service connects as a superuser. The role is created by
// the script the project ships, sql/roles/read-only-role.sql, exactly as documented.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import postgres from "postgres";
import { loadConfig } from "../support/config.ts";
import { openDatabase } from "../../src/backends/open.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { loadFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("least privilege", () => {
  const KEY = "least-privilege-key-58e2";
  const ROLE = `pce_reader_${process.pid}`;
  const PASSWORD = "reader-secret-2b7f";

  /** The role script the project ships (sql/roles/read-only-role.sql), run with psql as documented. */
  const ROLE_SCRIPT = resolve(import.meta.dir, "../../sql/roles/read-only-role.sql");

  function createRole(url: string): void {
    const r = Bun.spawnSync(["psql", url, "-q", "-v", `role=${ROLE}`, "-v", `password=${PASSWORD}`, "-f", ROLE_SCRIPT], { stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`${ROLE_SCRIPT} failed: ${r.stderr.toString()}`);
  }

  const TABLES = ["products", "product_daily_costs", "product_cost_months", "product_cost_answers", "product_cost_deltas", "product_cost_refreshes", "product_cost_folded_changes", "schema_migrations"];

  const INJECTIONS = [
    "'; drop table products; --",
    "2024-01-01'; delete from product_daily_costs; --",
    "2024-01-01' or '1'='1",
    "normal'); truncate products cascade; --",
    "'; commit; set session characteristics as transaction read write; update products set product_name = 'pwned'; --",
    "1; insert into products (product_id) values (666); --",
    "$1::date); delete from products; --",
    "all' union select null,null,null,null,null,null,null --",
    "\\'; drop table product_daily_costs; --",
    '"; drop table products; --',
    "2024-01-01\u0000'; drop table products; --",
    "%27%3B%20drop%20table%20products%3B%20--",
  ];

  let db: TestDatabase;
  let bin: { dir: string; path: string };
  const running: RunningBinary[] = [];

  async function fingerprint(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for (const table of TABLES) {
      const [row] = await db.admin.unsafe(`select count(*) || ':' || coalesce(md5(string_agg(t::text, ',' order by t::text)), '') as f from ${table} t`);
      out[table] = String(row!.f);
    }
    return out;
  }

  function roleUrl(): string {
    const u = new URL(db.url);
    u.username = ROLE;
    u.password = PASSWORD;
    return u.toString();
  }

  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    createRole(db.url);
    bin = isolatedBinary();
  }, 60_000);

  afterAll(async () => {
    for (const server of running) await server.stop();
    // The role is cluster-wide: remove it, whatever happened.
    await db.admin.unsafe(`drop owned by ${ROLE}`).catch(() => {});
    await db.admin.unsafe(`drop role if exists ${ROLE}`).catch(() => {});
  }, 30_000);

  describe("read-only sessions", () => {
    test("the service's own pool refuses to write, even connected as a superuser", async () => {
      const service = await openDatabase(loadConfig([], { DATABASE_URL: db.url }), true);
      try {
        const [setting] = await service.sql`show default_transaction_read_only`;
        expect(setting!.default_transaction_read_only).toBe("on");
        await expect(service.sql`update products set product_name = 'changed by a bug'`).rejects.toMatchObject({ code: "25006" }); // read_only_sql_transaction
      } finally {
        await service.close(2);
      }
    });
  });

  describe("a dedicated role with SELECT only", () => {
    let server: RunningBinary;
    beforeAll(async () => {
      server = await startBinary(bin.path, { DATABASE_URL: roleUrl(), PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      running.push(server);
    }, 30_000);

    test("the executable serves with it: readyz 200 and the exact rows", async () => {
      expect((await fetch(server.url + "/readyz")).status).toBe(200);
      const res = await fetch(server.url + "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31", {
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    });

    test("the role itself can write nothing, and its sessions are read-only whatever the client asks", async () => {
      const sql = postgres(roleUrl(), { max: 1, onnotice: () => {} });
      try {
        for (const statement of ["insert into products (product_id) values (777)", "delete from product_daily_costs", "create table x (y int)"]) {
          await expect(sql.unsafe(statement)).rejects.toMatchObject({ code: "25006" }); // read_only_sql_transaction
          // Asking for a read-write transaction gets past that, and then the grants stop it.
          await expect(sql.begin("read write", (tx) => tx.unsafe(statement))).rejects.toMatchObject({ code: "42501" }); // insufficient_privilege
        }
        const [setting] = await sql`show default_transaction_read_only`;
        expect(setting!.default_transaction_read_only).toBe("on");
      } finally {
        await sql.end();
      }
    });
  });

  describe("no SQL is built from request text", () => {
    test.each([
      ["the read-only role", () => roleUrl()],
      ["a superuser (worst case)", () => db.url],
    ])("injection strings in every parameter and header leave the tables untouched, connected as %s", async (_, url) => {
      const server = await startBinary(bin.path, { DATABASE_URL: url(), PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      running.push(server);
      const before = await fingerprint();
      const ok = { month_from: "2024-01-01", month_to: "2024-01-31", segment: "all" };
      const statuses = new Map<number, number>();
      for (const evil of INJECTIONS) {
        const requests: { params: Record<string, string>; headers: Record<string, string> }[] = [];
        for (const name of ["month_from", "month_to", "segment", "unknown"]) {
          requests.push({ params: { ...ok, [name]: evil }, headers: { authorization: `Bearer ${KEY}` } });
        }
        const headerSafe = evil.replaceAll("\u0000", "");
        for (const header of ["x-request-id", "accept", "accept-encoding", "user-agent", "cookie", "x-forwarded-for", "referer"]) {
          requests.push({ params: ok, headers: { authorization: `Bearer ${KEY}`, [header]: headerSafe } });
        }
        requests.push({ params: ok, headers: { authorization: `Bearer ${headerSafe}` } });
        requests.push({ params: ok, headers: { authorization: `Bearer ${KEY}${headerSafe}` } });
        for (const r of requests) {
          const res = await fetch(`${server.url}/external/v1/product-costs?${new URLSearchParams(r.params)}`, { headers: r.headers });
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        }
      }
      // Bad values are refused before any SQL runs; hostile headers change nothing.
      expect([...statuses.keys()].sort()).toEqual([200, 401, 422]);
      expect(await fingerprint()).toEqual(before);
      await server.stop();
    }, 60_000);
  });
});
