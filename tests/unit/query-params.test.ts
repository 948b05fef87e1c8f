import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ProductCostsQuery } from "../../src/query/schemas.ts";
import { productCostParams, rangeDays, validationItems } from "../../src/query/product-cost-params.ts";

describe("the product-costs query: its schema and Pydantic's items", () => {
  test("normalises accepted dates and defaults the segment", () => {
    const query = { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" };
    expect(Value.Check(ProductCostsQuery, query)).toBe(true);
    expect(productCostParams(query)).toEqual({ monthFrom: "2024-01-01", monthTo: "2024-01-31", segment: "normal" });
  });

  test("the lax date check holds after @elysiajs/openapi is loaded (its first import replaces TypeBox's date format with a strict one)", async () => {
    await import("@elysiajs/openapi");
    await import("../../src/service/api-docs.ts");
    expect(Value.Check(ProductCostsQuery, { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" })).toBe(true);
  });

  test("items keep Pydantic's key order: type, loc, msg, input, ctx", () => {
    const items = validationItems([...Value.Errors(ProductCostsQuery, { month_from: "2024-13-01", segment: "x" })]);
    expect(items.map((i) => Object.keys(i))).toEqual([
      ["type", "loc", "msg", "input", "ctx"],
      ["type", "loc", "msg", "input"],
      ["type", "loc", "msg", "input", "ctx"],
    ]);
  });

  test("rangeDays counts both ends", () => {
    expect(rangeDays("2024-01-01", "2024-01-01")).toBe(1);
    expect(rangeDays("2024-01-01", "2024-12-31")).toBe(366);
    expect(rangeDays("0001-01-01", "9999-12-31")).toBe(3652059);
  });
});
