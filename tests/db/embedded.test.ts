// The embedded database keeps the contract: read-only serving, the service's own deadline
// where PGlite enforces no statement_timeout, persistence in a data dir, one process per dir.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError } from "../../src/settings/config.ts";
import { openEmbedded, type EmbeddedDatabase } from "../../src/backends/embedded/embedded.ts";
import { loadFixture } from "../support/fixtures.ts";
import { KEY, testApp } from "../support/app.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { plannedMigrations } from "../../src/rollup/migrations.ts";
import { openDatabase } from "../../src/backends/open.ts";
import { loadConfig } from "../support/config.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const opened: EmbeddedDatabase[] = [];
afterAll(async () => {
  for (const db of opened) await db.close(2);
});

async function open(options: Partial<Parameters<typeof openEmbedded>[0]> = {}) {
  const db = await openEmbedded({ dataDir: undefined, demoData: false, readOnly: false, connectTimeoutMs: 5000, ...options });
  opened.push(db);
  return db;
}

describe("embedded database", () => {
  test("each seed holds what a start reads: one database, one WAL segment (issue 46: 70 MB unpacked at every demo start, 38 now)", async () => {
    for (const seed of ["demo", "empty"]) {
      const tar = Bun.zstdDecompressSync(await Bun.file(join(import.meta.dir, `../../.build/seeds/${seed}.tar.zst`)).bytes());
      const names: string[] = [];
      for (let at = 0; at + 512 <= tar.length && tar[at] !== 0; ) {
        const header = new TextDecoder().decode(tar.subarray(at, at + 136));
        names.push(header.slice(0, 100).replace(/\0.*$/s, ""));
        at += 512 + Math.ceil(parseInt(header.slice(124, 136), 8) / 512) * 512;
      }
      const databases = new Set(names.flatMap((n) => n.match(/^\/base\/(\d+)\//)?.[1] ?? []));
      const segments = names.filter((n) => /^\/pg_wal\/[0-9A-F]{24}$/.test(n));
      expect({ seed, databases: [...databases], segments: segments.length }).toEqual({ seed, databases: ["5"], segments: 1 });
      expect(tar.length).toBeLessThan(40 * 2 ** 20);
    }
    // And a database started from the demo seed is whole: the one database, its rows.
    const db = await open({ demoData: true });
    const [row] = await db.sql<{ databases: string[]; products: number }[]>`
      select array(select datname::text from pg_database) as databases, (select count(*)::int from products) as products`;
    expect(row).toEqual({ databases: ["postgres"], products: 300 });
  });

  test("serving sessions are read-only: a write fails with 25006", async () => {
    const db = await open({ readOnly: true });
    const error = await db.sql`insert into products (product_id) values (1)`.catch((e) => e);
    expect(error.code).toBe("25006");
    expect(await db.sql`select count(*)::int as n from products`).toEqual([{ n: 0 }] as never);
  });

  test("serving sessions plan like a server's (work_mem, random_page_cost, plan_cache_mode)", async () => {
    const db = await open({ readOnly: true });
    expect(await db.sql`select current_setting('work_mem') as work_mem, current_setting('random_page_cost') as random_page_cost,
                           current_setting('plan_cache_mode') as plan_cache_mode`).toEqual([
      { work_mem: "16MB", random_page_cost: "1.1", plan_cache_mode: "force_custom_plan" },
    ] as never);
  });

  test("in memory with demo data: a year of rows ending today, unmapped and sample products among them", async () => {
    const db = await open({ demoData: true, readOnly: true });
    const [stats] = await db.sql`
      select count(distinct p.product_id)::int as products,
             count(*) filter (where p.is_sample)::int > 0 as has_samples,
             count(*) filter (where p.erp_sku is null)::int > 0 as has_unmapped,
             count(*) filter (where d.purchase_cost_usd is null)::int > 0 as has_nulls,
             count(*) filter (where d.purchase_cost_usd = 0)::int > 0 as has_zeros,
             max(d.cost_date) - min(d.cost_date) as span_days
      from product_daily_costs d join products p using (product_id)`;
    expect(stats).toMatchObject({ products: 300, has_samples: true, has_unmapped: true, has_nulls: true, has_zeros: true, span_days: 364 });
    expect(db.description).toBe("embedded PostgreSQL (PGlite) in memory, new database with demo data");
  });

  test("the service's own deadline answers 503 while PGlite runs a long statement", async () => {
    const db = await open();
    await loadFixture(db.sql, PRODUCTS, DAILY);
    const app = testApp(db.sql, { firstBatchTimeoutMs: 300 });
    await db.sql`select 1`; // the pool's one connection is open and idle
    // A long statement takes the single PGlite session first: it is handed to the pool's
    // only connection before the request's read (postgres.js serves its queue in order).
    let blockerDone = false;
    const blocker = db.sql`select pg_sleep(1.5)`.execute().then(() => (blockerDone = true));
    const res = await app.get(JAN);
    // The service's own deadline answered while the statement was still running.
    expect([res.status, await res.text(), blockerDone]).toEqual([503, '{"detail":"DATABASE_UNAVAILABLE"}', false]);
    await blocker;
    const again = await app.get(JAN);
    expect([again.status, await again.text()]).toEqual([200, JANUARY_NORMAL]);
  });

  test("a data dir keeps its rows across restarts and never gets demo data unasked", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-datadir-"));
    const first = await openEmbedded({ dataDir: dir, demoData: false, readOnly: false, connectTimeoutMs: 5000 });
    expect(first.created).toBe(true);
    expect(await first.sql`select count(*)::int as n from products`).toEqual([{ n: 0 }] as never);
    await loadFixture(first.sql, PRODUCTS, DAILY);
    await first.close();
    expect(readdirSync(dir).sort()).toEqual(["pgdata"]);

    const second = await open({ dataDir: dir, readOnly: true });
    expect(second.created).toBe(false);
    expect(second.description).toBe(`embedded PostgreSQL (PGlite) in data dir ${dir}, existing database`);
    const res = await testApp(second.sql).get(JAN, { authorization: `Bearer ${KEY}` });
    expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
  });

  test("a data dir an older build left behind is opened as it is; every command but migrate refuses it, naming migrate --data-dir", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-datadir-old-"));
    const made = await openEmbedded({ dataDir: dir, demoData: false, readOnly: false, connectTimeoutMs: 5000 });
    // As a build without 0005 would have left it (0005 makes again what is missing, so dropping it all is a fair "before").
    await made.sql`delete from schema_migrations where version = '0005'`;
    await made.close();
    for (let i = 0; i < 2; i++) {
      const look = await openEmbedded({ dataDir: dir, demoData: false, readOnly: false, connectTimeoutMs: 5000 });
      expect(await plannedMigrations(look.sql)).toEqual([{ version: "0005", name: "rollup_v2", action: "run" }]);
      await look.close();
    }
    // Serving reads (read-only sessions); refresh and load-csv write.
    for (const command of ["serve", "refresh"]) {
      const error = await openDatabase(loadConfig(["--data-dir", dir], {}, command), command === "serve").catch((e) => e);
      expect([command, error]).toEqual([
        command,
        new ConfigError(`data dir ${dir} was made by an older build (migrations 0005 not applied): run product-cost-export migrate --data-dir ${dir} first`),
      ]);
    }
    const migrating = await openDatabase(loadConfig(["--data-dir", dir], {}, "migrate"), false, undefined, { migrating: true });
    expect(await plannedMigrations(migrating.sql)).toEqual([{ version: "0005", name: "rollup_v2", action: "run" }]);
    await migrating.close();
  }, 30_000); // three embedded starts: about 5 s on a 2-core machine

  test("a data dir in use is refused with a clear configuration error", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-datadir-"));
    await open({ dataDir: dir });
    const error = await openEmbedded({ dataDir: dir, demoData: false, readOnly: false, connectTimeoutMs: 5000 }).catch((e) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(`data dir ${dir} is in use by process ${process.pid}`);
  });
});
