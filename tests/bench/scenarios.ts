// The four answers the benchmarks ask for (bench.ts, repeat-reads.ts), on the generated
// dataset (730 days ending 2026-10-31): one day, a month, a quarter, two years.

export const SCENARIOS = [
  { name: "one day", from: "2026-10-15", to: "2026-10-15", segment: "normal" },
  { name: "one month", from: "2026-09-01", to: "2026-09-30", segment: "normal" },
  { name: "one quarter", from: "2026-07-01", to: "2026-09-30", segment: "normal" },
  { name: "two years", from: "2024-11-01", to: "2026-10-31", segment: "all" },
] as const;
export type Scenario = (typeof SCENARIOS)[number];

/** The query string of a range. */
export const query = (s: { from: string; to: string; segment: string }) => `month_from=${s.from}&month_to=${s.to}&segment=${s.segment}`;
