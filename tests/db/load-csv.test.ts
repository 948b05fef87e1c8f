// load-csv against each backend: upserts, nulls, exact decimals, and all-or-nothing failures.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadCsv, LoadError } from "../../src/load/load-csv.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";

describeBackends("load-csv on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
    await db.admin`truncate product_daily_costs, products`;
  });
  afterAll(async () => {
    await db.close();
  });

  test("loads products with columns in any order, empty cell = null, quoted empty = empty text", async () => {
    const n = await loadCsv(db.admin, "products", 'erp_sku,product_id,product_name,is_sample,erp_product_id\r\nA-1,1,"Lamp, ""big""",false,9223372036854775807\r\n,2,"",true,\r\n', { replace: true });
    expect(n).toBe(2);
    expect(await db.admin`select product_id, erp_product_id, erp_sku, product_name, is_sample from products order by 1`).toEqual([
      { product_id: "1", erp_product_id: "9223372036854775807", erp_sku: "A-1", product_name: 'Lamp, "big"', is_sample: false },
      { product_id: "2", erp_product_id: null, erp_sku: null, product_name: "", is_sample: true },
    ] as never);
  });

  test("daily costs keep exact decimals and nulls, and a second load upserts by key", async () => {
    await loadCsv(db.admin, "product_daily_costs", "product_id,cost_date,purchase_cost_usd,warehouse_fees_usd\n1,2024-01-01,99999999999999.999999,\n1,2024-01-02,0,0.000001\n", { replace: false });
    await loadCsv(db.admin, "product_daily_costs", "product_id,cost_date,purchase_cost_usd\n1,2024-01-02,5.5\n", { replace: false });
    expect(await db.admin`select cost_date::text, purchase_cost_usd, warehouse_fees_usd from product_daily_costs order by 1`).toEqual([
      { cost_date: "2024-01-01", purchase_cost_usd: "99999999999999.999999", warehouse_fees_usd: null },
      { cost_date: "2024-01-02", purchase_cost_usd: "5.500000", warehouse_fees_usd: "0.000001" },
    ] as never);
  });

  test.each([
    ["an unknown column", "product_id,colour\n1,red\n", 'unknown column "colour" for products (columns: product_id, erp_product_id, erp_sku, product_name, is_sample)'],
    ["no key column", "erp_sku\nA\n", "the header lacks the column product_id"],
    ["a short record", "product_id,erp_sku\n3,A\n4\n", "record 2: 1 fields, the header has 2"],
  ])("refuses %s and changes nothing", async (_, text, message) => {
    const before = await db.admin`select count(*)::int as n from products`;
    const error = await loadCsv(db.admin, "products", text, { replace: true }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toBe(message);
    expect(await db.admin`select count(*)::int as n from products`).toEqual(before);
  });

  test("a value PostgreSQL rejects rolls the whole file back", async () => {
    const error = await loadCsv(db.admin, "product_daily_costs", "product_id,cost_date\n1,2024-02-01\n1,2024-02-31\n", { replace: false }).catch((e) => e);
    expect(error).toBeInstanceOf(LoadError);
    expect(error.message).toStartWith("records 1-2: ");
    expect(await db.admin`select count(*)::int as n from product_daily_costs where cost_date >= '2024-02-01'`).toEqual([{ n: 0 }] as never);
  });
});
