import { describe, expect, test } from "bun:test";
import { PRODUCT_COST_COLUMNS, type ProductCostRow } from "../../src/reads/answer-rows.ts";
import { CSV_HEADER, rowsCsv } from "../../src/body/encode.ts";

type Fields = Record<(typeof PRODUCT_COST_COLUMNS)[number], string | null>;
const fields = (over: Partial<Fields> = {}): Fields => ({
  erp_product_id: "1", erp_sku: "S", product_name: "N",
  purchase_cost_usd: null, inbound_freight_usd: null, shipping_to_customer_usd: null, warehouse_fees_usd: null,
  ...over,
});
const cells = (f: Fields): ProductCostRow => PRODUCT_COST_COLUMNS.map((name) => (f[name] === null ? null : Buffer.from(f[name]!)));
const csv = (rows: Fields[], prefix = "") => new TextDecoder().decode(rowsCsv(rows.map(cells), prefix));
const rowCsv = (over: Partial<Fields>) => csv([fields(over)]);

describe("rowsCsv writes RFC 4180 lines with exact decimals", () => {
  test("the header names the seven fields in the JSON order, CRLF-terminated", () => {
    expect(CSV_HEADER).toBe("erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\r\n");
  });

  test("extremes survive untouched and null is an empty cell", () => {
    expect(rowCsv({ erp_product_id: "-9223372036854775808", purchase_cost_usd: "199999999999999.999998", inbound_freight_usd: "0.000001", shipping_to_customer_usd: "-0.5", warehouse_fees_usd: null }))
      .toBe("-9223372036854775808,S,N,199999999999999.999998,0.000001,-0.5,\r\n");
  });

  test("a row of nulls is six commas", () => {
    expect(rowCsv({ erp_product_id: null, erp_sku: null, product_name: null })).toBe(",,,,,,\r\n");
  });

  test("an empty string is a quoted empty cell, so it differs from null", () => {
    expect(rowCsv({ erp_sku: "", product_name: null })).toBe('1,"",,,,,\r\n');
  });

  test("the prefix comes first, then one line per row", () => {
    expect(csv([fields(), fields({ erp_product_id: "2", product_name: "a,b" })], CSV_HEADER)).toBe(CSV_HEADER + '1,S,N,,,,\r\n2,S,"a,b",,,,\r\n');
    expect(csv([], CSV_HEADER)).toBe(CSV_HEADER);
  });

  test.each([
    ["a,b", '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ["two\nlines", '"two\nlines"'],
    ["cr\rhere", '"cr\rhere"'],
    ["crlf\r\n", '"crlf\r\n"'],
    ['"', '""""'],
    ['日本,"x"', '"日本,""x"""'],
  ])("quotes %p as %p", (value, cell) => {
    expect(rowCsv({ product_name: value })).toBe(`1,S,${cell},,,,\r\n`);
  });

  test.each([" padded ", "Ünïcødé 日本", "=1+1", "tab\there", "semi;colon"])("leaves %p as is (no quote needed)", (value) => {
    expect(rowCsv({ product_name: value })).toBe(`1,S,${value},,,,\r\n`);
  });

  test.each(["NaN", "Infinity", "-Infinity", "1e5", ""])("refuses %p rather than writing a wrong number", (bad) => {
    expect(() => rowCsv({ warehouse_fees_usd: bad })).toThrow(`warehouse_fees_usd is not a finite decimal: ${bad}`);
  });
});
