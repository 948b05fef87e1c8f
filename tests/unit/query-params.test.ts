import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ApiError } from "../../src/failures.ts";
import { ProductCostsQuery, questionOf, rangeDays } from "../../src/query/product-cost-params.ts";

describe("the product-costs query: its schema and Pydantic's items", () => {
  test("the schema decodes accepted dates to YYYY-MM-DD and defaults the segment", () => {
    const query = { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" };
    expect(Value.Check(ProductCostsQuery, query)).toBe(true);
    expect(Value.Decode(ProductCostsQuery, query)).toEqual({ monthFrom: "2024-01-01", monthTo: "2024-01-31", segment: "normal" });
  });

  test("the lax dates hold after @elysiajs/openapi is loaded (its first import replaces TypeBox's date format with a strict one, which no parameter uses)", async () => {
    await import("@elysiajs/openapi");
    await import("../../src/service/api-docs.ts");
    expect(Value.Decode(ProductCostsQuery, { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" })).toEqual({ monthFrom: "2024-01-01", monthTo: "2024-01-31", segment: "normal" });
  });

  test("a date or segment Pydantic rejects fails the decode with the 422 of every rejected parameter", () => {
    let thrown: unknown;
    try {
      Value.Decode(ProductCostsQuery, { month_from: "2024-02-30", month_to: "2024-03-01", segment: "x" });
    } catch (err) {
      thrown = (err as { error?: unknown }).error;
    }
    expect(thrown).toBeInstanceOf(ApiError);
    expect((thrown as ApiError).status).toBe(422);
    expect(JSON.stringify((thrown as ApiError).detail)).toBe(
      '[{"type":"date_from_datetime_parsing","loc":["query","month_from"],"msg":"Input should be a valid date or datetime, day value is outside expected range","input":"2024-02-30","ctx":{"error":"day value is outside expected range"}},' +
        '{"type":"literal_error","loc":["query","segment"],"msg":"Input should be \'normal\', \'sample\' or \'all\'","input":"x","ctx":{"expected":"\'normal\', \'sample\' or \'all\'"}}]',
    );
  });

  test("items keep Pydantic's key order: type, loc, msg, input, ctx", () => {
    const verdict = questionOf({ month_from: "2024-13-01", segment: "x" });
    expect("items" in verdict && verdict.items.map((i) => Object.keys(i))).toEqual([
      ["type", "loc", "msg", "input", "ctx"],
      ["type", "loc", "msg", "input"],
      ["type", "loc", "msg", "input", "ctx"],
    ]);
  });

  test("the schema's own check fails only for a parameter missing", () => {
    expect(Value.Check(ProductCostsQuery, { month_from: "x", month_to: "y", segment: "z" })).toBe(true);
    expect(Value.Check(ProductCostsQuery, { month_from: "2024-01-01" })).toBe(false);
  });

  test("rangeDays counts both ends", () => {
    expect(rangeDays("2024-01-01", "2024-01-01")).toBe(1);
    expect(rangeDays("2024-01-01", "2024-12-31")).toBe(366);
    expect(rangeDays("0001-01-01", "9999-12-31")).toBe(3652059);
  });
});
