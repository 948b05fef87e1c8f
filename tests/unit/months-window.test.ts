// The window of months the rollup keeps, widened by the months notes name (months-window.ts).
import { expect, test } from "bun:test";
import { widen, WINDOW_GAP_MONTHS, type MonthsWindow } from "../../src/rollup/months-window.ts";

const window = (outsideBefore: string | null = null, outsideAfter: string | null = null): MonthsWindow => ({ first: "2024-11-01", last: "2026-10-01", outsideBefore, outsideAfter });

test("the ETL's next month, and months chained within a year of each other, widen it; farther ones stay outside", () => {
  expect(WINDOW_GAP_MONTHS).toBe(12);
  expect(widen(window(), ["2026-11-01"])).toEqual({ first: "2024-11-01", last: "2026-11-01" });
  expect(widen(window(), ["2027-10-01"])).toEqual({ first: "2024-11-01", last: "2027-10-01" }); // twelve months on
  expect(widen(window(), ["2027-11-01"])).toEqual({ first: "2024-11-01", last: "2026-10-01" }); // thirteen: outside
  expect(widen(window(), ["2027-06-01", "2028-05-01", "2099-12-01", "9999-12-01"])).toEqual({ first: "2024-11-01", last: "2028-05-01" });
  expect(widen(window(), ["0001-01-01", "2023-01-01", "2023-12-01"])).toEqual({ first: "2023-01-01", last: "2026-10-01" });
});

test("a widening that would take in a month with rows no note names is a rebuild; one short of it is not", () => {
  expect(widen(window(null, "2027-03-01"), ["2027-02-01"])).toEqual({ first: "2024-11-01", last: "2027-02-01" });
  expect(widen(window(null, "2027-03-01"), ["2027-03-01"])).toBe("rebuild");
  expect(widen(window(null, "2027-03-01"), ["2027-06-01"])).toBe("rebuild");
  expect(widen(window("2024-01-01", null), ["2024-02-01"])).toEqual({ first: "2024-02-01", last: "2026-10-01" });
  expect(widen(window("2024-01-01", null), ["2023-12-01"])).toBe("rebuild");
  // A far month outside stays outside: nothing is taken in.
  expect(widen(window(null, "2099-12-01"), ["2099-12-01"])).toEqual({ first: "2024-11-01", last: "2026-10-01" });
});
