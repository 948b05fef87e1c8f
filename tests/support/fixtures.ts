// Loads products and daily cost rows into a test database, replacing what was there.

import type { Sql } from "../../src/database/client.ts";

export interface ProductFixture {
  product_id: number | string;
  erp_product_id: number | string | null;
  erp_sku: string | null;
  product_name: string | null;
  is_sample?: boolean;
}

export interface DailyCostFixture {
  product_id: number | string;
  cost_date: string;
  purchase_cost_usd?: string | null;
  inbound_freight_usd?: string | null;
  shipping_to_customer_usd?: string | null;
  warehouse_fees_usd?: string | null;
}

export async function loadFixture(sql: Sql, products: ProductFixture[], daily: DailyCostFixture[]): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`truncate product_daily_costs, products`;
    for (const p of products) {
      await tx`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
               values (${String(p.product_id)}::bigint, ${p.erp_product_id === null ? null : String(p.erp_product_id)}::bigint,
                       ${p.erp_sku}, ${p.product_name}, ${p.is_sample ?? false})`;
    }
    for (const d of daily) {
      await tx`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, inbound_freight_usd,
                 shipping_to_customer_usd, warehouse_fees_usd)
               values (${String(d.product_id)}::bigint, ${d.cost_date}::text::date, ${d.purchase_cost_usd ?? null}::numeric,
                       ${d.inbound_freight_usd ?? null}::numeric, ${d.shipping_to_customer_usd ?? null}::numeric,
                       ${d.warehouse_fees_usd ?? null}::numeric)`;
    }
  });
}

/**
 * `products` products (SKU-001 …, every `sampleEvery`-th a sample; 0: none) and a row for each
 * on every day from `from` to `to`, amounts varying by product and day; replacing what was there.
 * The dense data of the tests that race readers against writers and the refresh.
 */
export async function loadDenseFixture(sql: Sql, options: { products: number; from: string; to: string; sampleEvery?: number }): Promise<void> {
  const { products, from, to, sampleEvery = 0 } = options;
  await sql.begin(async (tx) => {
    await tx`truncate product_daily_costs, products`;
    await tx`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
             select g, 1000 + g, 'SKU-' || lpad(g::text, 3, '0'), 'Product ' || g, ${sampleEvery} > 0 and g % ${sampleEvery} = 0
             from generate_series(1, ${products}::int) g`;
    await tx`insert into product_daily_costs
             select p, d::date, p * 0.5 + extract(day from d), 2, 3.25, 0.000001
             from generate_series(1, ${products}::int) p, generate_series(${from}::date, ${to}::date, interval '1 day') d`;
  });
}
