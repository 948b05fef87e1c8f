// The serving pool's sessions on a PostgreSQL server: read-only, and the planner settings
// the read queries are tuned for (src/db/client.ts), with the plan they are for. The
// embedded database's serving session is checked in tests/db/embedded.test.ts.
// Reported as skipped where there is no PostgreSQL.

import { afterAll, describe, expect, test } from "bun:test";
import { describeWithPostgres } from "../support/postgres.ts";
import { servicePool, testDatabase } from "../support/database.ts";
import type { Sql } from "../../src/db/client.ts";
import { productCostsStatement } from "../../src/db/product-costs.ts";

describeWithPostgres("serving sessions on PostgreSQL", () => {
  let sql: Sql | undefined;
  const service = async () => (sql ??= await servicePool());
  afterAll(async () => {
    await sql?.end({ timeout: 5 });
  });

  test("are read-only and plan with work_mem 16MB, random_page_cost 1.1 and custom plans only", async () => {
    expect(
      await (await service())`select current_setting('default_transaction_read_only') as read_only,
                       current_setting('work_mem') as work_mem, current_setting('random_page_cost') as random_page_cost,
                       current_setting('plan_cache_mode') as plan_cache_mode`,
    ).toEqual([{ read_only: "on", work_mem: "16MB", random_page_cost: "1.1", plan_cache_mode: "force_custom_plan" }] as never);
  });

  test("read one calendar month or quarter straight off the index in the response's order: no sort, no join", async () => {
    // Enough products for the planner to weigh an index scan against a sort (5,000, ten
    // days each in a quarter), SKUs in no relation to product ids.
    const { admin } = await testDatabase();
    await admin.begin(async (tx) => {
      await tx`truncate product_daily_costs, products`;
      await tx`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
               select p, p, 'SKU-' || (p * 7919 % 5000), 'Product ' || p, p % 10 = 0 from generate_series(1, 5000) p`;
      await tx`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd)
               select p, d::date, 1.5 from generate_series(1, 5000) p, generate_series('2026-01-01'::date, '2026-03-31'::date, '9 days') d`;
    });
    await admin`analyze products, product_daily_costs, product_period_costs`;
    for (const [from, to, segment] of [["2026-02-01", "2026-02-28", "normal"], ["2026-01-01", "2026-03-31", "all"]] as const) {
      const statement = productCostsStatement({ monthFrom: from, monthTo: to, segment });
      const plan = (await (await service()).unsafe(`explain (costs off) ${statement.text}`, statement.params)).map((row) => Object.values(row)[0]);
      expect({ from, to, plan }).toEqual({
        from,
        to,
        plan: [
          "Index Scan using product_period_costs_output_order_idx on product_period_costs r",
          expect.stringMatching(/^ {2}Index Cond: /),
          ...(segment === "all" ? [] : [expect.stringMatching(/^ {2}Filter: /)]),
        ],
      });
    }
  });
});
