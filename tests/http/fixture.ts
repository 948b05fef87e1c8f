// The shared fixture of the endpoint tests: each product exists to prove one rule.

import type { DailyCostFixture, ProductFixture } from "../support/fixtures.ts";

export const PRODUCTS: ProductFixture[] = [
  { product_id: 1, erp_product_id: 1001, erp_sku: "SKU-B", product_name: "Bravo" }, // boundaries, zero, null, tiny
  { product_id: 2, erp_product_id: 1002, erp_sku: "SKU-A", product_name: "Alpha" }, // every value null
  { product_id: 3, erp_product_id: null, erp_sku: null, product_name: "Unmapped one" }, // unmapped
  { product_id: 4, erp_product_id: 1004, erp_sku: "SKU-C", product_name: null, is_sample: true }, // sample, no name
  { product_id: 5, erp_product_id: "9223372036854775807", erp_sku: "SKU-MAX", product_name: "Huge id" }, // exactness
  { product_id: 6, erp_product_id: 1006, erp_sku: "SKU-D", product_name: "Outside the range" }, // no row in range
  { product_id: 7, erp_product_id: null, erp_sku: null, product_name: "Unmapped two" }, // negative amount
  { product_id: 8, erp_product_id: 1008, erp_sku: "sku-lower", product_name: 'Ünïcødé "quoted"' }, // byte order, escaping
];

const all = (v: string) => ({
  purchase_cost_usd: v,
  inbound_freight_usd: v,
  shipping_to_customer_usd: v,
  warehouse_fees_usd: v,
});

export const DAILY: DailyCostFixture[] = [
  { product_id: 1, cost_date: "2023-12-31", ...all("1000") },
  { product_id: 1, cost_date: "2024-01-01", purchase_cost_usd: "10.5", inbound_freight_usd: "0", shipping_to_customer_usd: null, warehouse_fees_usd: "1.25" },
  { product_id: 1, cost_date: "2024-01-31", purchase_cost_usd: "0.25", inbound_freight_usd: "0", shipping_to_customer_usd: null, warehouse_fees_usd: "0.000001" },
  { product_id: 1, cost_date: "2024-02-01", ...all("1000") },
  { product_id: 2, cost_date: "2024-01-15" },
  { product_id: 3, cost_date: "2024-01-10", purchase_cost_usd: "5" },
  { product_id: 4, cost_date: "2024-01-05", purchase_cost_usd: "7.5", inbound_freight_usd: "1", shipping_to_customer_usd: "2", warehouse_fees_usd: "3" },
  { product_id: 5, cost_date: "2024-01-20", purchase_cost_usd: "99999999999999.999999", inbound_freight_usd: "0.1" },
  { product_id: 5, cost_date: "2024-01-21", purchase_cost_usd: "99999999999999.999999", inbound_freight_usd: "0.2" },
  { product_id: 6, cost_date: "2024-03-01", ...all("1") },
  { product_id: 7, cost_date: "2024-01-02", warehouse_fees_usd: "-2.5" },
  { product_id: 8, cost_date: "2024-01-03", purchase_cost_usd: "1" },
];

const NULLS = '"purchase_cost_usd":null,"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":null';

/** Expected rows for January 2024, by product id, exactly as sent. */
export const JANUARY: Record<number, string> = {
  2: `{"erp_product_id":1002,"erp_sku":"SKU-A","product_name":"Alpha",${NULLS}}`,
  1: '{"erp_product_id":1001,"erp_sku":"SKU-B","product_name":"Bravo","purchase_cost_usd":10.75,"inbound_freight_usd":0,"shipping_to_customer_usd":null,"warehouse_fees_usd":1.250001}',
  4: '{"erp_product_id":1004,"erp_sku":"SKU-C","product_name":null,"purchase_cost_usd":7.5,"inbound_freight_usd":1,"shipping_to_customer_usd":2,"warehouse_fees_usd":3}',
  5: '{"erp_product_id":9223372036854775807,"erp_sku":"SKU-MAX","product_name":"Huge id","purchase_cost_usd":199999999999999.999998,"inbound_freight_usd":0.3,"shipping_to_customer_usd":null,"warehouse_fees_usd":null}',
  8: '{"erp_product_id":1008,"erp_sku":"sku-lower","product_name":"Ünïcødé \\"quoted\\"","purchase_cost_usd":1,"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":null}',
  3: '{"erp_product_id":null,"erp_sku":null,"product_name":"Unmapped one","purchase_cost_usd":5,"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":null}',
  7: '{"erp_product_id":null,"erp_sku":null,"product_name":"Unmapped two","purchase_cost_usd":null,"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":-2.5}',
};

export const body = (...ids: number[]) => "[" + ids.map((id) => JANUARY[id]).join(",") + "]";

/** January 2024, segment normal, in the documented order. */
export const JANUARY_NORMAL = body(2, 1, 5, 8, 3, 7);
export const JANUARY_ALL = body(2, 1, 4, 5, 8, 3, 7);
export const JANUARY_SAMPLE = body(4);

/** January 2024, segment normal, as CSV (Accept: text/csv): the rows of JANUARY_NORMAL in the same order. */
export const JANUARY_NORMAL_CSV =
  "erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\r\n" +
  "1002,SKU-A,Alpha,,,,\r\n" +
  "1001,SKU-B,Bravo,10.75,0,,1.250001\r\n" +
  "9223372036854775807,SKU-MAX,Huge id,199999999999999.999998,0.3,,\r\n" +
  '1008,sku-lower,"Ünïcødé ""quoted""",1,,,\r\n' +
  ",,Unmapped one,5,,,\r\n" +
  ",,Unmapped two,,,,-2.5\r\n";
