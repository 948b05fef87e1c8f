// The window of months the rollup keeps (migration 0013, issue 43). A rebuild finds it from
// the data (sql/refresh/window.sql): the run of dates, with no gap over WINDOW_GAP_MONTHS, that
// holds the most days. Rows outside it (a sentinel such as 9999-12-31, a year typed wrong,
// `infinity`) are read as they are and never folded, so the rollup's size and the refresh's
// time follow the window's months, not the span of the dates the data holds.
//
// Between rebuilds the refresh widens it over the months its notes name within
// WINDOW_GAP_MONTHS of it (the ETL's next month, a backfill of last year), as a rebuild would
// find it. It rebuilds instead when the widening would take in a month with rows that no note
// names: rows outside the window whose notes an earlier refresh forgot (outsideBefore,
// outsideAfter: the nearest such months it knows of).

/** The longest gap, in months, between two dates of one run. */
export const WINDOW_GAP_MONTHS = 12;

export interface MonthsWindow {
  first: string; // YYYY-MM-01
  last: string;
  /** The nearest month before `first` with rows the months do not hold (null: none known). */
  outsideBefore: string | null;
  /** The nearest month after `last` with such rows. */
  outsideAfter: string | null;
}

/** A month's index (YYYY-MM-01, years 0001 to 9999): months apart are indexes apart. */
function monthIndex(month: string): number {
  return Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)) - 1;
}

/**
 * `window` widened over `named` (months notes name outside it, ascending) that lie within
 * WINDOW_GAP_MONTHS of it, one after another; "rebuild" when that takes in a month with rows
 * no note names. The months farther out stay outside.
 */
export function widen(window: MonthsWindow, named: readonly string[]): { first: string; last: string } | "rebuild" {
  let { first, last } = window;
  for (const month of named) {
    if (month > last && monthIndex(month) - monthIndex(last) <= WINDOW_GAP_MONTHS) last = month;
  }
  for (const month of [...named].reverse()) {
    if (month < first && monthIndex(first) - monthIndex(month) <= WINDOW_GAP_MONTHS) first = month;
  }
  const takesIn = (window.outsideAfter !== null && window.outsideAfter <= last) || (window.outsideBefore !== null && window.outsideBefore >= first);
  return takesIn ? "rebuild" : { first, last };
}
