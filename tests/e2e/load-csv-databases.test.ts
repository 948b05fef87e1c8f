// Issue 52: what load-csv does once its rows are committed, on each database an ETL may load.
// The executable, on a database with the contract's two tables alone (no `migrate`: the
// SELECT-only setup), on a migrated one, as an ETL role that may write the two tables alone,
// and stopped by SIGTERM while its refresh waits: the load that committed always exits 0 with
// its summary, and anything after the commit that failed says the rows are committed.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { MIGRATIONS } from "../../src/rollup/migrations.ts";
import { REFRESH_LOCK_ID } from "../../src/rollup/refresh.ts";
import { cleanEnv, isolatedBinary } from "../support/binary.ts";
import { databaseUrl as urlOf, freshDatabases } from "../support/database.ts";
import { advisoryBarrier } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const CONTRACT = `pce_load_contract_${process.pid}`;
const MIGRATED = `pce_load_migrated_${process.pid}`;
const ETL = `pce_load_etl_${process.pid}`;
const PRODUCTS = "product_id,product_name\n1,Lamp\n2,Desk\n";


const jsonLines = (text: string) => text.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);

describeWithPostgres("load-csv after its commit, on the databases an ETL loads", () => {
  const work = mkdtempSync(join(tmpdir(), "pce-load-db-"));
  const file = join(work, "products.csv");
  let bin: { dir: string; path: string };
  let dropDatabases: () => Promise<void>;
  let contract: postgres.Sql;
  let migrated: postgres.Sql;

  beforeAll(async () => {
    bin = isolatedBinary();
    writeFileSync(file, PRODUCTS);
    dropDatabases = await freshDatabases([CONTRACT, MIGRATED], [ETL]);
    // As the ETL made them: the contract's tables (migration 0001's statements, no record of it).
    contract = postgres(urlOf(CONTRACT), { max: 1, onnotice: () => {} });
    await contract.unsafe(MIGRATIONS.find((m) => m.version === "0001")!.sql);
    expect(Bun.spawnSync([bin.path, "migrate"], { env: cleanEnv({ DATABASE_URL: urlOf(MIGRATED) }) }).exitCode).toBe(0);
    migrated = postgres(urlOf(MIGRATED), { max: 1, onnotice: () => {} });
    // An ETL role that may write the two tables and nothing of the rollup (its triggers run as their owner).
    await migrated.unsafe(`grant select, insert, update, delete, truncate on products, product_daily_costs to ${ETL}`);
  }, 60_000);

  afterAll(async () => {
    await contract?.end();
    await migrated?.end();
    await dropDatabases?.();
    rmSync(work, { recursive: true, force: true });
    rmSync(bin.dir, { recursive: true, force: true });
  });

  function load(url: string) {
    const r = Bun.spawnSync([bin.path, "load-csv", "products", file, "--replace"], { env: cleanEnv({ DATABASE_URL: url }), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, signal: r.signalCode ?? null, lines: jsonLines(r.stdout.toString()), stderr: r.stderr.toString() };
  }
  const summary = (database: string, extra: Record<string, unknown> = {}) => ({
    level: "info",
    msg: "csv loaded",
    table: "products",
    file,
    rows: 2,
    inserted: 2,
    updated: 0,
    replaced: true,
    duration_ms: expect.any(Number),
    database: `PostgreSQL at ${urlOf(database)}`,
    ...extra,
  });
  const stored = async (sql: postgres.Sql) => await sql`select product_id::int as id, product_name as name from products order by 1`;

  test("the contract tables alone (no migrate): the rows commit, exit 0 with the summary, nothing to refresh and nothing of the rollup made", async () => {
    const r = load(urlOf(CONTRACT));
    expect({ code: r.code, lines: r.lines }).toEqual({ code: 0, lines: [{ time: expect.any(String), ...summary(CONTRACT) }] });
    expect(r.stderr).toMatch(new RegExp(`^load-csv: loading ${file}: 100% \\(0\\.0 MB of 0\\.0 MB\\) in \\d+\\.\\d s, 2 rows\n$`));
    expect(await stored(contract)).toEqual([{ id: 1, name: "Lamp" }, { id: 2, name: "Desk" }] as never);
    expect(await contract`select relname from pg_class where relname like 'product_cost%' or relname = 'schema_migrations'`).toEqual([] as never);
  });

  test("a migrated database: as before, the summary names the refresh that folded the rows in", async () => {
    const r = load(urlOf(MIGRATED));
    expect({ code: r.code, lines: r.lines }).toEqual({ code: 0, lines: [{ time: expect.any(String), ...summary(MIGRATED, { refresh_ms: expect.any(Number) }) }] });
    expect(await stored(migrated)).toEqual([{ id: 1, name: "Lamp" }, { id: 2, name: "Desk" }] as never);
    expect(await migrated`select count(*)::int as notes from product_cost_deltas`).toEqual([{ notes: 0 }] as never);
  });

  test("a role that may write the two tables alone: the rows commit, exit 0, the summary, then one warning that the refresh failed and the rows are committed", async () => {
    await migrated`truncate product_daily_costs, products`;
    const r = load(urlOf(MIGRATED, ETL));
    expect({ code: r.code, lines: r.lines }).toEqual({
      code: 0,
      lines: [
        { time: expect.any(String), ...summary(MIGRATED, { database: `PostgreSQL at ${urlOf(MIGRATED, ETL)}` }) },
        {
          time: expect.any(String),
          level: "warn",
          msg: "the rows are committed; the refresh after them failed",
          problem: "PERMISSION_DENIED",
          cause: "permission denied for table schema_migrations",
          fix: "the refresh writes the rollup tables: give it a URL of the tables' owner (the one `migrate` uses), not the serving role's",
          then: "nothing to load again: reads add the rows up exactly until the next refresh (the timer's, or `product-cost-export refresh`) folds them in",
        },
      ],
    });
    expect(await stored(migrated)).toEqual([{ id: 1, name: "Lamp" }, { id: 2, name: "Desk" }] as never);
    // The writers' notes wait for the next refresh.
    expect((await migrated`select count(*)::int as notes from product_cost_deltas`)[0]!.notes).toBeGreaterThan(0);
  });

  test("SIGTERM while its refresh waits for another refresh: the rows stay committed, the refresh stops, exit 0 with the summary and a warning", async () => {
    await migrated`truncate product_daily_costs, products`;
    // Another refresh holds the lock: load-csv's refresh waits for it after the commit.
    const running = await advisoryBarrier(urlOf(MIGRATED), REFRESH_LOCK_ID);
    try {
      const proc = Bun.spawn([bin.path, "load-csv", "products", file, "--replace"], { env: cleanEnv({ DATABASE_URL: urlOf(MIGRATED) }), stdout: "pipe", stderr: "pipe" });
      await running.waiting(1);
      expect(await stored(migrated)).toEqual([{ id: 1, name: "Lamp" }, { id: 2, name: "Desk" }] as never);
      proc.kill("SIGTERM");
      const [code, stdout] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
      expect({ code, signal: proc.signalCode ?? null, lines: jsonLines(stdout) }).toEqual({
        code: 0,
        signal: null,
        lines: [
          { time: expect.any(String), ...summary(MIGRATED) },
          {
            time: expect.any(String),
            level: "warn",
            msg: "the rows are committed; the refresh after them failed",
            cause: "refresh stopped (SIGTERM): the step in progress was rolled back; the steps before it are kept and the next refresh does the rest",
            then: "nothing to load again: reads add the rows up exactly until the next refresh (the timer's, or `product-cost-export refresh`) folds them in",
          },
        ],
      });
    } finally {
      await running.release();
    }
    expect(await stored(migrated)).toEqual([{ id: 1, name: "Lamp" }, { id: 2, name: "Desk" }] as never);
  }, 30_000);
});
