// The proleptic Gregorian calendar, which PostgreSQL's dates and Pydantic's date parser
// (speedate) both count in: shared by the validation of dates and the reads over them.

/** Days in a month (1-based), or undefined for a month outside 1-12. */
export function daysInMonth(year: number, month: number): number | undefined {
  if (month < 1 || month > 12) return undefined;
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
