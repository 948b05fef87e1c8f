// Issue 44, as an operator who may only read the ETL's database meets it: the compiled
// executable on a database with the contract's two tables and nothing of ours (no `migrate`),
// with a role that may SELECT those two tables and nothing else, and on a hot standby of it
// (pg_basebackup: nobody may change a standby). Both answer the GROUP BY's bytes from the start,
// say so once (the start's lines, /readyz, /metrics), and follow the primary's writes.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { MIGRATIONS } from "../../src/rollup/migrations.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { waitUntil } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";

const KEY = "daily-source-key-5c1e";
const READER = "etl_reader";
type Range = [string, string, "normal" | "sample" | "all"];
const RANGES: Range[] = [
  ["2026-01-01", "2026-01-01", "all"],
  ["2026-01-01", "2026-01-31", "normal"],
  ["2025-12-20", "2026-02-20", "sample"],
  ["0001-01-01", "9999-12-31", "all"],
];

describeWithPostgres("the executable on the ETL's tables alone, with SELECT alone: a database and its hot standby", () => {
  let primary: Cluster;
  let standby: Cluster;
  let owner: postgres.Sql;
  const servers: RunningBinary[] = [];
  const readerUrl = (cluster: Cluster) => {
    const u = new URL(cluster.url());
    u.username = READER;
    return u.toString();
  };

  beforeAll(async () => {
    primary = await createCluster();
    primary.start();
    owner = postgres(primary.url(), { max: 1, onnotice: () => {} });
    // As the ETL made them: the contract's tables (migration 0001's statements, no record of it), its rows.
    await owner.unsafe(MIGRATIONS.find((m) => m.version === "0001")!.sql);
    await owner.unsafe(`
      insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
      select p, 700000 + p, case when p % 50 = 0 then null else 'SKU-' || (p % 89) end, 'Product ' || p, p % 7 = 0
      from generate_series(1, 400) p;
      insert into product_daily_costs
      select p, date '2025-12-01' + d, case when (p + d) % 13 = 0 then 'NaN' else (p * d) % 101 / 7.0 end, nullif(p % 5, 0), 0, 99999999999999.999999
      from generate_series(1, 400) p, generate_series(0, 90) d where (p + d) % 4 <> 0;
      insert into product_daily_costs values (1, 'infinity', 1, 1, 1, 1), (2, '9999-12-31', 2, 2, 2, 2), (3, '4713-01-01 BC', 3, 3, 3, 3);
      create role ${READER} login;
      grant select on products, product_daily_costs to ${READER};`);
    standby = await createCluster({ standbyOf: primary });
    standby.start();
    const replica = postgres(standby.url(), { max: 1, onnotice: () => {} });
    await waitUntil("the standby has the rows", async () => (await replica`select count(*)::int as n from product_daily_costs`)[0]!.n > 0);
    await replica.end();
    const bin = isolatedBinary();
    for (const cluster of [primary, standby]) {
      servers.push(await startBinary(bin.path, { DATABASE_URL: readerUrl(cluster), PRODUCT_COST_API_KEYS: KEY }, [], bin.dir));
    }
  }, 120_000);

  afterAll(async () => {
    for (const s of servers) await s.stop("SIGKILL");
    await owner?.end({ timeout: 1 });
    standby?.destroy();
    primary?.destroy();
  }, 60_000);

  const answer = async (server: RunningBinary, [from, to, segment]: Range) => {
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`, { headers: { authorization: `Bearer ${KEY}` } });
    return { status: res.status, etag: res.headers.get("etag"), body: await res.text() };
  };

  test("the primary and the standby answer the GROUP BY's bytes, and say they read the daily rows", async () => {
    for (const [i, server] of servers.entries()) {
      const where = i === 0 ? "primary" : "standby";
      expect(await server.waitForLine((l) => l.msg === "database ready")).toMatchObject({ source: "daily rows" });
      expect(server.lines.filter((l) => l.msg === "reading the daily rows directly")).toEqual([
        expect.objectContaining({ level: "warn", why: "migrations 0001 to 0014 of this build are not applied" }),
      ]);
      const ready = await fetch(`${server.url}/readyz`);
      expect({ where, status: ready.status, body: await ready.json() }).toMatchObject({
        where,
        status: 200,
        body: { detail: "READY", source: "daily rows", why: "migrations 0001 to 0014 of this build are not applied" },
      });
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      expect(metrics).toContain('product_cost_export_read_source{source="daily"} 1');
      for (const range of RANGES) {
        expect({ where, range, ...(await answer(server, range)) }).toEqual({ where, range, status: 200, etag: null, body: await naiveAnswer(owner, ...range) });
      }
    }
  }, 60_000);

  test("a write on the primary: both answer the new sums once it has reached them", async () => {
    const range: Range = ["2026-01-01", "2026-01-31", "all"];
    await owner`update product_daily_costs set purchase_cost_usd = 123.456 where product_id = 10 and cost_date = '2026-01-15'`;
    const expected = await naiveAnswer(owner, ...range);
    expect(await answer(servers[0]!, range)).toEqual({ status: 200, etag: null, body: expected });
    await waitUntil("the standby answers the write", async () => (await answer(servers[1]!, range)).body === expected);
    expect(servers.flatMap((s) => s.lines.filter((l) => l.msg === "request" && l.status !== 200))).toEqual([]);
  }, 60_000);
});
