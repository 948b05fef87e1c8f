// Migration 0011: product_cost_months partitioned by month, so that the rows the refresh
// rewrites every day stay among their own month's pages. On a database with a built rollup
// (0010) the table becomes the `_history` partition as it is (no rewrite: same file); each
// later month the data reaches gets a partition of its own, made by the refresh; a new
// database's first build puts the months before the latest twelve in `_history` and each of
// those twelve in its own. Every answer stays exact, the serving role keeps reading, and a
// row dated long before the rest neither fails nor makes a partition per month.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate, MIGRATIONS } from "../../src/rollup/migrations.ts";
import buildMonthsSql from "../../sql/refresh/build_months.sql" with { type: "text" };
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { monthsDrift, servedAndNaive } from "../support/rollup-oracle.ts";

const RANGES: [string, string][] = [
  ["2026-10-14", "2026-10-14"],
  ["2026-10-01", "2026-10-24"],
  ["2026-01-01", "2026-11-03"],
  ["2025-09-15", "2026-11-02"],
  ["2026-08-01", "2026-09-30"],
];

describeWithPostgres("the months partitioned by month (0011)", () => {
  const names = { upgraded: `pce_months_upgraded_${process.pid}`, fresh: `pce_months_fresh_${process.pid}` };
  const READER = `pce_months_reader_${process.pid}`;
  const pools: Sql[] = [];

  const urlOf = (name: string) => {
    const u = new URL(SERVER_URL);
    u.pathname = "/" + name;
    return u.toString();
  };

  async function database(name: string): Promise<{ admin: Sql; reader: Sql }> {
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.unsafe(`create database ${name}`);
    await server.end();
    const admin = createPool({ url: urlOf(name), max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-months-test" });
    const u = new URL(urlOf(name));
    u.username = READER;
    const reader = createPool({ url: u.toString(), max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: true, applicationName: "pce-months-test-reader" });
    pools.push(admin, reader);
    return { admin, reader };
  }

  async function populate(admin: Sql): Promise<void> {
    await admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
                select i, 5000 + i, 'SKU-' || (i % 97), 'Product ' || i, i % 4 = 0 from generate_series(1, 200) i`;
    await admin`insert into product_daily_costs
                select p, d::date, round((p * 7 + extract(doy from d)) % 101 / 3.0, 6), case when p % 11 = 0 then null else 2.25 end, 0.5, p * 0.01
                from generate_series(1, 200) p, generate_series('2024-11-01'::date, '2026-10-31'::date, interval '1 day') d
                where (p + extract(doy from d)::int) % 3 <> 0`;
  }

  async function partitions(admin: Sql): Promise<string[]> {
    const rows = await admin<{ name: string }[]>`
      select c.relname::text as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = 'product_cost_months'::regclass order by 1`;
    return rows.map((r) => r.name);
  }

  /** Every range through the serving role, as the service reads it, equal to the GROUP BY at the same snapshot. */
  async function expectExact(admin: Sql, reader: Sql, context: string): Promise<void> {
    for (const [from, to] of RANGES) {
      const [answer, expected] = await servedAndNaive(reader, from, to);
      expect({ context, from, to, exact: answer === expected, rows: answer.length > 2 }).toEqual({ context, from, to, exact: true, rows: true });
    }
    expect(await monthsDrift(admin)).toEqual([]);
  }

  beforeAll(async () => {
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop role if exists ${READER}`);
    await server.unsafe(`create role ${READER} login`);
    await server.end();
  });

  afterAll(async () => {
    for (const pool of pools) await pool.end({ timeout: 5 });
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    for (const name of Object.values(names)) await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.unsafe(`drop role if exists ${READER}`);
    await server.end();
  });

  test("upgraded from 0010 with a built rollup: the table becomes _history as it is, the next month gets a partition of its own", async () => {
    const { admin, reader } = await database(names.upgraded);
    const before = MIGRATIONS.filter((m) => m.version <= "0010");
    await migrate(admin, before);
    await populate(admin);
    await admin.unsafe(`grant select on products, product_daily_costs to ${READER}`);
    // This build's refresh runs on this build's schema alone; what 0010's build did here: the
    // months of every product from its daily rows (the data's span), the log forgotten.
    await expect(refreshRollup(admin)).rejects.toThrow("`migrate` would apply 0011 (months_by_month), 0012 (notes_of_any_date), 0013 (months_window), 0014 (notes_always), and then refresh; nothing was refreshed");
    const [span] = await admin<{ first: string; last: string; lo: string; hi: string }[]>`
      select min(date_trunc('month', cost_date))::date::text as first, max(date_trunc('month', cost_date))::date::text as last,
             min(product_id)::text as lo, max(product_id)::text as hi
      from product_daily_costs`;
    await admin.begin(async (tx) => {
      await tx.unsafe(buildMonthsSql, [span!.lo, span!.hi, span!.last, span!.first]);
      await tx`delete from product_cost_deltas`;
    });
    await admin.unsafe(`grant select on product_cost_months, product_cost_deltas, product_cost_refreshes, product_cost_answers, product_cost_folded_changes, schema_migrations to ${READER}`);
    const [file] = await admin<{ node: string }[]>`select pg_relation_filenode('product_cost_months')::text as node`;

    expect(await migrate(admin)).toEqual(["0011", "0012", "0013", "0014"]);
    const [kind] = await admin<{ kind: string; node: string }[]>`
      select (select relkind::text from pg_class where oid = 'product_cost_months'::regclass) as kind,
             pg_relation_filenode('product_cost_months_history')::text as node`;
    expect({ kind: kind!.kind, node: kind!.node, partitions: await partitions(admin) }).toEqual({ kind: "p", node: file!.node, partitions: ["product_cost_months_history"] });
    await expectExact(admin, reader, "after the upgrade");

    // The ETL's first day of November, and a correction of September: November has its own partition.
    await admin`insert into product_daily_costs select p, '2026-11-03', 1.5, null, 2, 3 from generate_series(1, 200) p where p % 3 <> 0`;
    await admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where cost_date = '2026-09-10'`;
    await refreshRollup(admin);
    expect(await partitions(admin)).toEqual(["product_cost_months_2026_11", "product_cost_months_history"]);
    const [november] = await admin<{ rows: number }[]>`select count(*)::int as rows from product_cost_months_2026_11`;
    expect(november!.rows).toBe(200);
    await expectExact(admin, reader, "November written and folded");
  }, 120_000);

  test("a new database: _history below the data's latest twelve months, a partition for each of them; a row dated 1990 is read as it is", async () => {
    const { admin, reader } = await database(names.fresh);
    await migrate(admin, MIGRATIONS.filter((m) => m.version <= "0002")); // the contract's tables, as the ETL had them
    await populate(admin);
    await admin.unsafe(`grant select on products, product_daily_costs to ${READER}`);
    await migrate(admin); // 0006 grants the new tables to whoever reads the daily rows, and 0011 keeps it so
    await refreshRollup(admin); // what migrate's caller runs next on an existing database
    const months = Array.from({ length: 12 }, (_, i) => `product_cost_months_${i < 2 ? "2025" : "2026"}_${String(i < 2 ? 11 + i : i - 1).padStart(2, "0")}`);
    expect(await partitions(admin)).toEqual([...months, "product_cost_months_history"]);
    // Storage parameters carry from the latest partition to the next one (an operator's autovacuum setting).
    await admin`alter table product_cost_months_2026_10 set (autovacuum_enabled = false)`;
    await expectExact(admin, reader, "built");

    await admin`insert into product_daily_costs values (7, '1990-03-05', 1, 2, 3, 4)`;
    await admin`insert into product_daily_costs select p, '2026-11-03', 1.5, null, 2, 3 from generate_series(1, 200) p`;
    await refreshRollup(admin);
    expect(await partitions(admin)).toEqual([...months, "product_cost_months_2026_11", "product_cost_months_history"]);
    const [options] = await admin<{ options: string[] }[]>`select reloptions as options from pg_class where oid = 'product_cost_months_2026_11'::regclass`;
    expect(options!.options).toEqual(["fillfactor=90", "autovacuum_enabled=false"]);
    // 1990 lies decades before the data's window of months (0013): its row is read as it is,
    // and makes no month row (the months were dense from March 1990 on: 414 rows).
    const [old] = await admin<{ rows: number }[]>`select count(*)::int as rows from product_cost_months_history where product_id = 7 and month < '2024-11-01'`;
    expect(old!.rows).toBe(0);
    await expectExact(admin, reader, "1990 and November written and folded");
    const [served, naive] = await servedAndNaive(reader, "1990-01-01", "1990-12-31");
    expect({ served, rows: served!.split("Product 7").length - 1 }).toEqual({ served: naive!, rows: 1 });
  }, 120_000);
});
