import { describe, expect, test } from "bun:test";
import { calendarPeriodOf } from "../../src/reads/product-costs.ts";

describe("calendarPeriodOf", () => {
  test.each([
    ["2026-09-01", "2026-09-30", "month"],
    ["2024-02-01", "2024-02-29", "month"], // leap year
    ["2023-02-01", "2023-02-28", "month"],
    ["2000-02-01", "2000-02-29", "month"], // divisible by 400: leap
    ["1900-02-01", "1900-02-28", "month"], // divisible by 100: not leap
    ["0004-02-01", "0004-02-29", "month"], // a year below 100 (Date would read it as 1904)
    ["2026-12-01", "2026-12-31", "month"],
    ["2026-07-01", "2026-09-30", "quarter"],
    ["2026-01-01", "2026-03-31", "quarter"],
    ["2026-10-01", "2026-12-31", "quarter"],
    ["2026-01-01", "2026-12-31", "year"],
    ["0001-01-01", "0001-12-31", "year"],
    ["9999-01-01", "9999-12-31", "year"],
  ] as const)("%s .. %s is one %s", (from, to, period) => {
    expect(calendarPeriodOf(from, to)).toBe(period);
  });

  test.each([
    ["2026-09-01", "2026-09-29"], // a day short
    ["2026-09-02", "2026-09-30"], // starts late
    ["2026-09-01", "2026-10-01"], // a day more
    ["2023-02-01", "2023-02-29"], // not a date in 2023; never valid input, and not a month
    ["1900-02-01", "1900-02-29"],
    ["2026-08-01", "2026-10-31"], // three months, not a quarter
    ["2026-02-01", "2026-04-30"],
    ["2026-09-01", "2026-10-31"], // two months
    ["2026-02-01", "2027-01-31"], // twelve months, not a year
    ["2025-12-01", "2026-12-31"],
    ["2025-01-01", "2026-12-31"], // two years
    ["2026-09-15", "2026-09-15"], // one day
    ["2026-09-01", "2026-09-01"],
  ] as const)("%s .. %s is not one calendar period", (from, to) => {
    expect(calendarPeriodOf(from, to)).toBeUndefined();
  });
});
