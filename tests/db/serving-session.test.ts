// The serving pool's sessions on a PostgreSQL server: read-only, and the planner settings
// the read queries are tuned for (src/database/client.ts), with the plan they are for. The
// embedded database's serving session is checked in tests/db/embedded.test.ts.
// Reported as skipped where there is no PostgreSQL.

import { afterAll, expect, test } from "bun:test";
import { describeWithPostgres } from "../support/postgres.ts";
import { servicePool, testDatabase } from "../support/database.ts";
import type { Sql } from "../../src/database/client.ts";
import { productCostsStatement, renderedAnswerStatement } from "../../src/reads/product-costs.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";

describeWithPostgres("serving sessions on PostgreSQL", () => {
  let sql: Sql | undefined;
  const service = async () => (sql ??= await servicePool());
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
  });

  test("are read-only and plan with work_mem 16MB, random_page_cost 1.1, custom plans only and no parallel workers", async () => {
    expect(
      await (await service())`select current_setting('default_transaction_read_only') as read_only,
                       current_setting('work_mem') as work_mem, current_setting('random_page_cost') as random_page_cost,
                       current_setting('plan_cache_mode') as plan_cache_mode,
                       current_setting('max_parallel_workers_per_gather') as workers`,
    ).toEqual([{ read_only: "on", work_mem: "16MB", random_page_cost: "1.1", plan_cache_mode: "force_custom_plan", workers: "0" }] as never);
  });

  test("read an exact period's rendered answer and nothing else, and any longer range as two lookups of the months, no daily row", async () => {
    // Enough products for the planner to weigh index scans against sequential ones (5,000,
    // ten days each in a quarter), SKUs in no relation to product ids; refreshed.
    const { admin } = await testDatabase();
    await admin.begin(async (tx) => {
      await tx`truncate product_daily_costs, products`;
      await tx`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
               select p, p, 'SKU-' || (p * 7919 % 5000), 'Product ' || p, p % 10 = 0 from generate_series(1, 5000) p`;
      await tx`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd)
               select p, d::date, 1.5 from generate_series(1, 5000) p, generate_series('2026-01-01'::date, '2026-03-31'::date, '9 days') d`;
    });
    await refreshRollup(admin);
    await admin`analyze products, product_daily_costs, product_cost_months, product_cost_answers, product_cost_deltas`;
    const plan = async (statement: { text: string; params: string[] }) =>
      (await (await service()).unsafe(`explain (costs off) ${statement.text}`, statement.params)).map((row) => String(Object.values(row)[0])).join("\n");

    // The rendered answer reads its chunks and the log, nothing else: no rows, no products, no sort of them.
    const month = await plan(renderedAnswerStatement({ monthFrom: "2026-02-01", monthTo: "2026-02-28", segment: "normal" })!);
    const tables = new Set([...month.matchAll(/ on (\w+)/g)].map((m) => m[1]!).filter((name) => !/_(pkey|idx)$/.test(name)));
    expect([...tables].sort()).toEqual(["product_cost_answers", "product_cost_deltas"]);

    // Edges inside months, whole months between: each edge one lookup of a month's rows by
    // key, and no daily row read (the branch over them is never run).
    // The months are partitioned by month (0011): each edge reads its month's partition, and
    // no other partition gives more than the one row of the rollup's last month.
    for (const [monthFrom, monthTo, partitions] of [
      ["2026-01-01", "2026-02-28", ["product_cost_months_2026_01", "product_cost_months_2026_02"]],
      ["2026-01-17", "2026-03-09", ["product_cost_months_2026_01", "product_cost_months_2026_03"]],
    ] as const) {
      const statement = productCostsStatement({ monthFrom, monthTo, segment: "all" });
      const months = (await (await service()).unsafe(`explain (analyze, costs off, timing off, summary off) ${statement.text}`, statement.params))
        .map((row) => String(Object.values(row)[0]))
        .join("\n");
      const read = [...months.matchAll(/Scan (?:using \w+ )?on (product_cost_months\w*) \w+ \(actual rows=(\d+) /g)].filter((m) => Number(m[2]) > 1);
      expect(read.map((m) => `${m[1]} ${m[2]}`).sort()).toEqual(partitions.map((p) => `${p} 5000`));
      // (The first and last day come from the date index, a row each: the statistics that
      // weigh the daily rows against the months.)
      expect(months).not.toMatch(/on product_daily_costs \w+ \(actual rows=([2-9]|\d\d)/);
      expect(months).toMatch(/Index Scan using product_daily_costs_cost_date_idx on product_daily_costs \w+ \(never executed\)/);
    }
  });
});
