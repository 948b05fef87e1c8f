// The refresh's plan (src/rollup/refresh-plan.ts) for every path, without a database: what a
// state read at a refresh's start makes it do. The executor's runs of each plan against
// PostgreSQL are tests/db/refresh-plans.test.ts and the rollup's property tests.

import { describe, expect, test } from "bun:test";
import { monthsFrom, planFold, type RefreshState } from "../../src/rollup/refresh-plan.ts";

const WINDOW = { first: "2025-11-01", last: "2026-10-01", outsideBefore: null, outsideAfter: null };

/** A rollup folded through October 2026, with `notes` notes of products 10 to 20 in October. */
function state(changes: Partial<RefreshState> = {}): RefreshState {
  return {
    everything: false,
    notes: 4,
    window: WINDOW,
    monthsLastMonth: "2026-10-01",
    notesFirstMonth: "2026-10-01",
    notesLastMonth: "2026-10-01",
    firstProduct: "10",
    lastProduct: "20",
    namedOutside: [],
    ...changes,
  };
}

const STEP_ROWS = { stepRows: 200_000 };

describe("planFold", () => {
  test("nothing waits: none", () => {
    expect(planFold(state({ notes: 0, notesFirstMonth: null, notesLastMonth: null, firstProduct: null, lastProduct: null }), STEP_ROWS)).toEqual({ mode: "none" });
  });

  test("a rebuild asked for is one, whatever waits (nothing, or a note of everything)", () => {
    expect(planFold(state({ notes: 0 }), { ...STEP_ROWS, rebuild: true })).toEqual({ mode: "rebuild", why: "asked" });
    expect(planFold(state({ everything: true }), { ...STEP_ROWS, rebuild: true })).toEqual({ mode: "rebuild", why: "asked" });
  });

  test("a note of everything (a TRUNCATE, a migration) rebuilds, even with no other note counted", () => {
    expect(planFold(state({ everything: true, notes: 1, firstProduct: null, lastProduct: null }), STEP_ROWS)).toEqual({ mode: "rebuild", why: "everything noted" });
  });

  test("notes inside the window: one step of every product named when it fits, else weighed steps", () => {
    expect(planFold(state(), STEP_ROWS)).toEqual({ mode: "changes", window: WINDOW, widens: false, oneStep: { first_product: "10", last_product: "20", products: 0 } });
    // 4 notes of October 2026 write at most 4 rows; of November 2025, 4 × 12.
    expect(planFold(state(), { stepRows: 3 })).toEqual({ mode: "changes", window: WINDOW, widens: false });
    expect(planFold(state({ notesFirstMonth: "2025-11-01" }), { stepRows: 47 })).toEqual({ mode: "changes", window: WINDOW, widens: false });
    expect(planFold(state({ notesFirstMonth: "2025-11-01" }), { stepRows: 48 })).toMatchObject({ mode: "changes", oneStep: { first_product: "10" } });
    // A note of a far date (outside the window, past its reach) counts from the window's first month.
    expect(planFold(state({ notesFirstMonth: "0001-01-01", namedOutside: ["0001-01-01"] }), { stepRows: 48 })).toMatchObject({ mode: "changes", widens: false, oneStep: { last_product: "20" } });
  });

  test("notes of products' attributes only: a step-less fold (no product named by a month)", () => {
    expect(planFold(state({ notesFirstMonth: null, notesLastMonth: null, firstProduct: null, lastProduct: null }), STEP_ROWS)).toEqual({ mode: "changes", window: WINDOW, widens: false });
  });

  test("the ETL's next month: the window widens over it and the first step moves the rollup's last month", () => {
    expect(planFold(state({ notesLastMonth: "2026-11-01", namedOutside: ["2026-11-01"] }), STEP_ROWS)).toEqual({
      mode: "changes",
      window: { ...WINDOW, last: "2026-11-01" },
      widens: true,
      extendFrom: "2026-10-01",
      oneStep: { first_product: "10", last_product: "20", products: 0 },
    });
  });

  test("a backfill of last year widens the window back; nothing moves the last month", () => {
    expect(planFold(state({ notesFirstMonth: "2025-03-01", namedOutside: ["2025-03-01"] }), STEP_ROWS)).toEqual({
      mode: "changes",
      window: { ...WINDOW, first: "2025-03-01" },
      widens: true,
      oneStep: { first_product: "10", last_product: "20", products: 0 },
    });
  });

  test("a month past the gap stays outside: read as it is, the window as it was", () => {
    expect(planFold(state({ notesLastMonth: "9999-12-01", namedOutside: ["9999-12-01"] }), STEP_ROWS)).toMatchObject({ mode: "changes", window: WINDOW, widens: false });
  });

  test("widening over a month with rows no note names rebuilds", () => {
    const window = { ...WINDOW, outsideAfter: "2027-02-01" };
    expect(planFold(state({ window, namedOutside: ["2027-03-01"] }), STEP_ROWS)).toEqual({ mode: "rebuild", why: "rows outside the window" });
    expect(planFold(state({ window: { ...WINDOW, outsideBefore: "2025-01-01" }, namedOutside: ["2024-12-01"] }), STEP_ROWS)).toEqual({ mode: "rebuild", why: "rows outside the window" });
    // Short of that month: widened.
    expect(planFold(state({ window, namedOutside: ["2027-01-01"] }), STEP_ROWS)).toMatchObject({ mode: "changes", window: { last: "2027-01-01" }, widens: true });
  });

  test("no window yet: notes of dates a request can name rebuild; notes of none leave nothing to fold into", () => {
    const empty = { window: null, monthsLastMonth: null };
    expect(planFold(state(empty), STEP_ROWS)).toEqual({ mode: "rebuild", why: "no window yet" });
    expect(planFold(state({ ...empty, notesFirstMonth: null, notesLastMonth: null }), STEP_ROWS)).toEqual({ mode: "changes", window: null, widens: false });
  });

  test("a rollup behind its window (a stopped rebuild's months) is moved to it by the first step", () => {
    expect(planFold(state({ monthsLastMonth: "2026-08-01" }), STEP_ROWS)).toMatchObject({ mode: "changes", extendFrom: "2026-08-01" });
    // No month row at all: nothing to move from (the steps write every month of their products).
    expect(planFold(state({ monthsLastMonth: null }), STEP_ROWS)).toEqual({ mode: "changes", window: WINDOW, widens: false, oneStep: { first_product: "10", last_product: "20", products: 0 } });
  });
});

describe("monthsFrom", () => {
  test("whole months between two first days, across years, and backwards", () => {
    expect([monthsFrom("2026-10-01", "2026-10-01"), monthsFrom("2025-11-01", "2026-10-01"), monthsFrom("2026-10-01", "2025-11-01"), monthsFrom("0001-01-01", "9999-12-01")]).toEqual([0, 11, -11, 119_987]);
  });
});
