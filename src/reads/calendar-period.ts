// Which inclusive date ranges are exactly one calendar month, quarter or year: their JSON
// answer is the one the refresh rendered (sql/queries/product_costs_rendered.sql) while the
// change log says it still holds.

import { daysInMonth } from "../query/calendar.ts";

export type CalendarPeriod = "month" | "quarter" | "year";

const PERIOD_MONTHS: readonly [CalendarPeriod, number][] = [
  ["month", 1],
  ["quarter", 3],
  ["year", 12],
];

/**
 * The calendar month, quarter or year that [from, to] (YYYY-MM-DD, valid dates) covers
 * exactly, or undefined. Plain integer arithmetic: JavaScript's Date maps years below 100
 * to 19xx, and these dates run from 0001 to 9999.
 */
export function calendarPeriodOf(from: string, to: string): CalendarPeriod | undefined {
  const year = Number(from.slice(0, 4));
  const month = Number(from.slice(5, 7));
  const [toYear, toMonth, toDay] = [Number(to.slice(0, 4)), Number(to.slice(5, 7)), Number(to.slice(8, 10))];
  if (from.slice(8, 10) !== "01" || toYear !== year) return undefined;
  for (const [period, months] of PERIOD_MONTHS) {
    // A period starts on a multiple of its length: January, April, July or October for a quarter.
    if ((month - 1) % months !== 0) continue;
    const lastMonth = month + months - 1;
    if (toMonth === lastMonth && toDay === daysInMonth(year, lastMonth)) return period;
  }
  return undefined;
}
