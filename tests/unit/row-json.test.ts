import { describe, expect, test } from "bun:test";
import { rowJson } from "../../src/http/row-json.ts";

const row = (over: Record<string, string | null> = {}) => ({
  erp_product_id: "1", erp_sku: "S", product_name: "N",
  purchase_cost_usd: null, inbound_freight_usd: null, shipping_to_customer_usd: null, warehouse_fees_usd: null,
  ...over,
});

describe("rowJson writes exact JSON numbers from decimal text", () => {
  test("extremes survive untouched", () => {
    const json = rowJson(row({ erp_product_id: "-9223372036854775808", purchase_cost_usd: "199999999999999.999998", inbound_freight_usd: "0.000001", shipping_to_customer_usd: "-0.5", warehouse_fees_usd: "0" }));
    expect(json).toBe('{"erp_product_id":-9223372036854775808,"erp_sku":"S","product_name":"N","purchase_cost_usd":199999999999999.999998,"inbound_freight_usd":0.000001,"shipping_to_customer_usd":-0.5,"warehouse_fees_usd":0}');
  });

  test("text is escaped as JSON, control characters included", () => {
    expect(rowJson(row({ erp_sku: 'a"b\\c\n\u0001', product_name: "日本" }))).toContain('"erp_sku":"a\\"b\\\\c\\n\\u0001","product_name":"日本"');
  });

  test.each(["NaN", "Infinity", "-Infinity", "1e5", ""])("refuses %p rather than writing invalid JSON", (bad) => {
    expect(() => rowJson(row({ purchase_cost_usd: bad }))).toThrow();
  });
});
