// Writes fixtures as the CSV files an operator would feed to `load-csv`.

import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { DailyCostFixture, ProductFixture } from "./fixtures.ts";

function cell(value: unknown): string {
  if (value === null || value === undefined) return "";
  const text = String(value);
  return /[",\r\n]/.test(text) || text === "" ? `"${text.replace(/"/g, '""')}"` : text;
}

export function writeFixtureCsv(dir: string, products: ProductFixture[], daily: DailyCostFixture[]): { products: string; daily: string } {
  const productsFile = join(dir, "products.csv");
  const dailyFile = join(dir, "daily.csv");
  writeFileSync(
    productsFile,
    "product_id,erp_product_id,erp_sku,product_name,is_sample\r\n" +
      products.map((p) => [p.product_id, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample ?? false].map(cell).join(",")).join("\r\n") +
      "\r\n",
  );
  writeFileSync(
    dailyFile,
    "cost_date,product_id,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\n" +
      daily
        .map((d) => [d.cost_date, d.product_id, d.purchase_cost_usd, d.inbound_freight_usd, d.shipping_to_customer_usd, d.warehouse_fees_usd].map(cell).join(","))
        .join("\n") +
      "\n",
  );
  return { products: productsFile, daily: dailyFile };
}
