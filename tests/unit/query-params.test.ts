import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { ApiError } from "../../src/failures.ts";
import { checkedQuestion, ProductCostsQuery, questionOf, rangeDays } from "../../src/query/product-cost-params.ts";

describe("the product-costs query: its schema and Pydantic's items", () => {
  test("the question of accepted parameters: the dates as YYYY-MM-DD, the segment defaulted", () => {
    const query = { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" };
    expect(Value.Check(ProductCostsQuery, query)).toBe(true);
    expect(checkedQuestion(query, 0)).toEqual({ monthFrom: "2024-01-01", monthTo: "2024-01-31", segment: "normal" });
  });

  test("the lax dates hold after @elysiajs/openapi is loaded (its first import replaces TypeBox's date format with a strict one, which no parameter uses)", async () => {
    await import("@elysiajs/openapi");
    await import("../../src/service/api-docs.ts");
    expect(Value.Check(ProductCostsQuery, { month_from: "1704067200", month_to: "2024-01-31T00:00:00Z" })).toBe(true);
    expect(Value.Check(ProductCostsQuery, { month_from: "2024-02-30", month_to: "2024-03-01" })).toBe(false);
  });

  test("every rejected parameter at once, in Pydantic's words and order", () => {
    const verdict = questionOf({ month_from: "2024-02-30", month_to: "2024-03-01", segment: "x" });
    expect(JSON.stringify(verdict)).toBe(
      '{"items":[{"type":"date_from_datetime_parsing","loc":["query","month_from"],"msg":"Input should be a valid date or datetime, day value is outside expected range","input":"2024-02-30","ctx":{"error":"day value is outside expected range"}},' +
        '{"type":"literal_error","loc":["query","segment"],"msg":"Input should be \'normal\', \'sample\' or \'all\'","input":"x","ctx":{"expected":"\'normal\', \'sample\' or \'all\'"}}]}',
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

  test("a range that ends before it starts, or longer than the limit, is 400", () => {
    const refused = (params: Record<string, string>, max: number) => {
      try {
        checkedQuestion(params, max);
        return "accepted";
      } catch (err) {
        return (err as ApiError).status;
      }
    };
    expect(refused({ month_from: "2024-02-01", month_to: "2024-01-31" }, 0)).toBe(400);
    expect(refused({ month_from: "2024-01-01", month_to: "2024-12-31" }, 366)).toBe("accepted");
    expect(refused({ month_from: "2024-01-01", month_to: "2025-01-01" }, 366)).toBe(400);
  });

  test("rangeDays counts both ends", () => {
    expect(rangeDays("2024-01-01", "2024-01-01")).toBe(1);
    expect(rangeDays("2024-01-01", "2024-12-31")).toBe(366);
    expect(rangeDays("0001-01-01", "9999-12-31")).toBe(3652059);
  });
});
