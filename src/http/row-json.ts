// Writes product cost rows as JSON text. Ids and amounts arrive from PostgreSQL as exact
// decimal text and are spliced in as JSON numbers untouched: no Number() anywhere, so
// 2^63-1 and 99999999999999.999999 survive. Text fields go through JSON.stringify.

import type { ProductCostRow } from "../db/product-costs.ts";

// PostgreSQL's numeric and bigint output: optional minus, digits, optional fraction.
const DECIMAL = /^-?\d+(\.\d+)?$/;

/** The decimal text as is; NaN and Infinity (numerics too) have no JSON or CSV form, so they are refused. */
export function finiteDecimal(text: string, field: string): string {
  if (!DECIMAL.test(text)) throw new Error(`${field} is not a finite decimal: ${text}`);
  return text;
}

function decimal(text: string | null, field: string): string {
  return text === null ? "null" : finiteDecimal(text, field);
}

function str(text: string | null): string {
  return text === null ? "null" : JSON.stringify(text);
}

export function rowJson(r: ProductCostRow): string {
  return (
    `{"erp_product_id":${decimal(r.erp_product_id, "erp_product_id")}` +
    `,"erp_sku":${str(r.erp_sku)}` +
    `,"product_name":${str(r.product_name)}` +
    `,"purchase_cost_usd":${decimal(r.purchase_cost_usd, "purchase_cost_usd")}` +
    `,"inbound_freight_usd":${decimal(r.inbound_freight_usd, "inbound_freight_usd")}` +
    `,"shipping_to_customer_usd":${decimal(r.shipping_to_customer_usd, "shipping_to_customer_usd")}` +
    `,"warehouse_fees_usd":${decimal(r.warehouse_fees_usd, "warehouse_fees_usd")}}`
  );
}

export function rowsJson(rows: readonly ProductCostRow[]): string {
  let out = "";
  for (let i = 0; i < rows.length; i++) out += (i ? "," : "") + rowJson(rows[i]!);
  return out;
}
