// What a refresh folds, decided from what it read at its start (sql/refresh/state.sql) and
// nothing else: a pure function, so that every path is a unit test (tests/unit/refresh-plan.test.ts)
// and the executor (refresh.ts) only runs the plan's steps. Three plans:
//   none     nothing waits: the refresh only records that it ran;
//   rebuild  every month from the daily rows (asked for; a note of everything: a TRUNCATE, a
//            migration; the window would take in rows no note names; the first dates a request
//            can name, and no window for them yet);
//   changes  the months the notes name, in steps of products: widening the window over months
//            the notes name near it, and moving the rollup's last month when the window did.

import { widen, type MonthsWindow } from "./months-window.ts";

/** What the refresh reads at its start, under its lock (sql/refresh/state.sql). */
export interface RefreshState {
  /** A note of everything waits (a TRUNCATE, a migration, a rebuild stopped mid-way). */
  everything: boolean;
  /** Notes waiting in product_cost_deltas. */
  notes: number;
  /** The months the rollup keeps (null: none yet, no date a request can name). */
  window: MonthsWindow | null;
  /** The last month in product_cost_months (null: none yet). */
  monthsLastMonth: string | null;
  /** The earliest and latest month the notes name, of the dates a request can name (null: none). */
  notesFirstMonth: string | null;
  notesLastMonth: string | null;
  /** The lowest and highest product a note of a month names (null: none). */
  firstProduct: string | null;
  lastProduct: string | null;
  /** The months notes name outside the window, of the dates a request can name, ascending. */
  namedOutside: readonly string[];
}

export type RebuildReason = "asked" | "everything noted" | "rows outside the window" | "no window yet";

/** The products of one fold step: ids first through last (and every id between). */
export interface StepProducts {
  first_product: string;
  last_product: string;
  products: number;
}

export type FoldPlan =
  | { mode: "none" }
  | { mode: "rebuild"; why: RebuildReason }
  | {
      mode: "changes";
      /** The window the steps fold into (null: no note names a month a request can name). */
      window: MonthsWindow | null;
      /** The window is wider than the record's: the first step records it. */
      widens: boolean;
      /** The window reached past the rollup's last month, which was this one: the first step moves it. */
      extendFrom?: string;
      /** Every named product in one step (it fits in stepRows); else the steps are weighed (batches.sql). */
      oneStep?: StepProducts;
    };

/** Whole months from `from` to `to` (both YYYY-MM-01; 0 when the same, negative when `to` is earlier). */
export function monthsFrom(from: string, to: string): number {
  return (Number(to.slice(0, 4)) - Number(from.slice(0, 4))) * 12 + Number(to.slice(5, 7)) - Number(from.slice(5, 7));
}

/** The plan for `state`: `rebuild` asked, and `stepRows` month rows a step writes at most. */
export function planFold(state: RefreshState, options: { rebuild?: boolean; stepRows: number }): FoldPlan {
  if (options.rebuild) return { mode: "rebuild", why: "asked" };
  if (state.everything) return { mode: "rebuild", why: "everything noted" };
  if (state.notes === 0) return { mode: "none" };
  let window = state.window;
  let widens = false;
  if (window) {
    const wider = widen(window, state.namedOutside);
    if (wider === "rebuild") return { mode: "rebuild", why: "rows outside the window" };
    if (wider.first !== window.first || wider.last !== window.last) {
      window = { ...window, ...wider };
      widens = true;
    }
  } else if (state.notesLastMonth !== null) {
    return { mode: "rebuild", why: "no window yet" };
  }
  if (!window) return { mode: "changes", window: null, widens: false };
  const extendFrom = state.monthsLastMonth !== null && window.last > state.monthsLastMonth ? state.monthsLastMonth : undefined;
  // At most a row per note and month from the earliest month named: when that fits in a step,
  // one step of every product named (no need to weigh each product's months).
  const fromNamed = state.notesFirstMonth !== null && state.notesFirstMonth > window.first ? state.notesFirstMonth : window.first;
  const atMost = state.notes * (monthsFrom(fromNamed, window.last) + 1);
  const oneStep =
    state.firstProduct !== null && state.lastProduct !== null && atMost <= options.stepRows
      ? { first_product: state.firstProduct, last_product: state.lastProduct, products: 0 }
      : undefined;
  return { mode: "changes", window, widens, ...(extendFrom ? { extendFrom } : {}), ...(oneStep ? { oneStep } : {}) };
}
