import { describe, expect, test } from "bun:test";
import { rangeDays, validateProductCostParams } from "../../src/validation/product-cost-params.ts";
import { lastValues } from "../../src/validation/query-string.ts";

const q = (query: string) => lastValues(`http://h/p?${query}`);

describe("query parsing as Starlette does it", () => {
  test.each([
    ["a=1&a=2", { a: "2" }],
    ["a=1+2", { a: "1 2" }],
    ["a=%zz&b=%", { a: "%zz", b: "%" }],
    ["a=%FF%FE", { a: "\ufffd\ufffd" }],
    ["a=%C3%A9", { a: "é" }],
    ["a", { a: "" }],
    ["a=", { a: "" }],
    ["&&a=1&&", { a: "1" }],
    ["a=1=2", { a: "1=2" }],
    ["%61=x", { a: "x" }],
    ["a=1;b=2", { a: "1;b=2" }],
  ])("%p", (query, expected) => {
    expect(Object.fromEntries(q(query))).toEqual(expected);
  });

  test("no query string at all", () => {
    expect(lastValues("http://h/p").size).toBe(0);
  });
});

describe("validateProductCostParams", () => {
  test("normalises accepted dates and defaults the segment", () => {
    expect(validateProductCostParams("http://h/p?month_from=1704067200&month_to=2024-01-31T00:00:00Z")).toEqual({
      ok: true,
      params: { monthFrom: "2024-01-01", monthTo: "2024-01-31", segment: "normal" },
    });
  });

  test("items keep Pydantic's key order: type, loc, msg, input, ctx", () => {
    const r = validateProductCostParams("http://h/p?month_from=2024-13-01&segment=x");
    expect(r.ok).toBe(false);
    const items = (r as { errors: object[] }).errors;
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
