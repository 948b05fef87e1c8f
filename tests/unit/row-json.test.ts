import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { PRODUCT_COST_COLUMNS, type ProductCostRow } from "../../src/reads/answer-rows.ts";
import { rowsJson } from "../../src/body/encode.ts";
import { testSeed } from "../support/seed.ts";

type Fields = Record<(typeof PRODUCT_COST_COLUMNS)[number], string | null>;
const fields = (over: Partial<Fields> = {}): Fields => ({
  erp_product_id: "1", erp_sku: "S", product_name: "N",
  purchase_cost_usd: null, inbound_freight_usd: null, shipping_to_customer_usd: null, warehouse_fees_usd: null,
  ...over,
});
/** The row as PostgreSQL sends it: each column's text in UTF-8. */
const cells = (f: Fields): ProductCostRow => PRODUCT_COST_COLUMNS.map((name) => (f[name] === null ? null : Buffer.from(f[name]!)));
const json = (rows: Fields[], prefix = "") => new TextDecoder().decode(rowsJson(rows.map(cells), prefix));

/** What the service must write: numbers spliced in, strings as JSON.stringify writes them. */
const expected = (f: Fields) =>
  "{" + PRODUCT_COST_COLUMNS.map((name) => `"${name}":` + (f[name] === null ? "null" : name === "erp_sku" || name === "product_name" ? JSON.stringify(f[name]) : f[name])).join(",") + "}";

describe("rowsJson writes exact JSON from PostgreSQL's bytes", () => {
  test("extremes survive untouched", () => {
    expect(json([fields({ erp_product_id: "-9223372036854775808", purchase_cost_usd: "199999999999999.999998", inbound_freight_usd: "0.000001", shipping_to_customer_usd: "-0.5", warehouse_fees_usd: "0" })]))
      .toBe('{"erp_product_id":-9223372036854775808,"erp_sku":"S","product_name":"N","purchase_cost_usd":199999999999999.999998,"inbound_freight_usd":0.000001,"shipping_to_customer_usd":-0.5,"warehouse_fees_usd":0}');
  });

  test("text is escaped as JSON, control characters included, and UTF-8 copied", () => {
    expect(json([fields({ erp_sku: 'a"b\\c\n\u0001\u007f', product_name: "日本 \u2028 😀" })])).toContain('"erp_sku":"a\\"b\\\\c\\n\\u0001\u007f","product_name":"日本 \u2028 😀"');
  });

  test("rows are separated by commas after the prefix; no rows is the prefix alone", () => {
    expect(json([fields(), fields({ erp_product_id: "2" })], "[")).toBe("[" + expected(fields()) + "," + expected(fields({ erp_product_id: "2" })));
    expect(json([], ",")).toBe(",");
  });

  test("every string and decimal is written as JSON.stringify would (random rows)", () => {
    // Every ASCII byte (controls, quote, backslash) often, and any code point besides.
    const char = fc.oneof(fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)), fc.string({ unit: "binary", minLength: 1, maxLength: 1 }));
    const text = fc.option(fc.array(char, { maxLength: 12 }).map((chars) => chars.join("")), { nil: null });
    const decimal = fc.option(fc.tuple(fc.boolean(), fc.bigInt({ min: 0n, max: 10n ** 20n }), fc.option(fc.nat({ max: 999999 }), { nil: undefined }))
      .map(([neg, int, frac]) => (neg ? "-" : "") + int + (frac === undefined ? "" : "." + String(frac).padStart(6, "0"))), { nil: null });
    const row = fc.record({ erp_product_id: decimal, erp_sku: text, product_name: text, purchase_cost_usd: decimal, inbound_freight_usd: decimal, shipping_to_customer_usd: decimal, warehouse_fees_usd: decimal });
    fc.assert(fc.property(fc.array(row, { maxLength: 5 }), (rows) => {
      // Lone surrogates cannot come from PostgreSQL (its text is valid UTF-8).
      const valid = rows.map((r) => ({ ...r, erp_sku: r.erp_sku?.toWellFormed() ?? null, product_name: r.product_name?.toWellFormed() ?? null }));
      expect(json(valid, "[") + "]").toBe("[" + valid.map(expected).join(",") + "]");
      expect(JSON.parse(json(valid, "[") + "]")).toHaveLength(valid.length);
    }), { seed: testSeed("row JSON property"), numRuns: 500 });
  });

  test.each(["NaN", "Infinity", "-Infinity", "1e5", "", "-", "1.", ".5", "1.2.3", " 1"])("refuses %p rather than writing invalid JSON", (bad) => {
    expect(() => json([fields({ purchase_cost_usd: bad })])).toThrow(`purchase_cost_usd is not a finite decimal: ${bad}`);
  });
});
