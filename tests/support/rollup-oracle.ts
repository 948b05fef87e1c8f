// The oracle the rollup's tests compare with: the naive GROUP BY over the daily rows
// (tests/db/naive_product_costs.sql) rendered as the service renders rows, and checks that
// the refresh's materializations (the months, the rendered answers) equal what the daily
// rows say.

import type { Sql as Pool } from "../../src/database/client.ts";
import type { ProductCostRow } from "../../src/reads/answer-rows.ts";
import { productCostsStatement } from "../../src/reads/product-costs.ts";
import { rowsJson } from "../../src/body/encode.ts";
import naiveQuery from "../db/naive_product_costs.sql" with { type: "text" };
import { COLUMNS, type SEGMENTS, type Sql } from "./random-writes.ts";

type Segment = (typeof SEGMENTS)[number];

/** Rows as the service writes them: a JSON array. */
export function rowsAsJson(rows: readonly ProductCostRow[]): string {
  return new TextDecoder().decode(rowsJson(rows, "[")) + "]";
}

/** The naive GROUP BY's rows, rendered as the service renders rows: the answer every read must give. */
export async function naiveAnswer(sql: Sql, from: string, to: string, segment: Segment): Promise<string> {
  return rowsAsJson(await sql.unsafe(naiveQuery, [from, to, segment]).raw());
}

/** The service's statement and the naive GROUP BY for one range, read in one REPEATABLE READ snapshot: [served, naive]. */
export async function servedAndNaive(sql: Pool, from: string, to: string, segment: Segment = "all"): Promise<[string, string]> {
  return await sql.begin("isolation level repeatable read", async (tx) => {
    const statement = productCostsStatement({ monthFrom: from, monthTo: to, segment });
    const served = rowsAsJson(await tx.unsafe(statement.text, statement.params).raw());
    return [served, await naiveAnswer(tx as unknown as Sql, from, to, segment)] as [string, string];
  });
}

/**
 * Rows of product_cost_months (migration 0006) that differ from what the daily rows say, each
 * value computed here the plain way, row by row (none when right): for every product with
 * daily rows in the window of months (migration 0013, from the refresh's record), every month
 * from its first there through the window's last, its totals before the month (from the
 * window's first), and within it the day masks and running sums. No window: no month rows.
 * Nothing while a note of everything waits (the months are then to be rebuilt, and unread).
 */
export async function monthsDrift(sql: Sql): Promise<unknown[]> {
  // While a note of everything waits, reads add up the daily rows and the refresh will rebuild
  // the months: what they hold meanwhile is nobody's answer.
  const [pending] = await sql.unsafe(`select exists (select from product_cost_deltas where product_id is null) as everything`);
  if ((pending as { everything?: boolean } | undefined)?.everything) return [];
  const value = (c: string) => `nullif(d.${c}, 'NaN')`;
  const inWindow = `d.cost_date >= (select window_first from product_cost_refreshes)`;
  const before = (c: string) =>
    `(select coalesce(sum(${value(c)}), 0) from product_daily_costs d where d.product_id = g.product_id and d.cost_date < g.month and ${inWindow}),
     (select count(${value(c)})::int from product_daily_costs d where d.product_id = g.product_id and d.cost_date < g.month and ${inWindow})`;
  const inMonth = `d.product_id = g.product_id and d.cost_date >= g.month and d.cost_date < (g.month + interval '1 month')::date`;
  const mask = (test: string) => `(select coalesce(bit_or(1 << (extract(day from d.cost_date)::int - 1)), 0) from product_daily_costs d where ${inMonth} and ${test})`;
  const running = (c: string) =>
    `(select coalesce(array_agg(x.s order by x.cost_date), '{}') from
       (select d.cost_date, sum(coalesce(${value(c)}, 0)) over (order by d.cost_date) as s from product_daily_costs d where ${inMonth}) x)`;
  return [
    ...(await sql.unsafe(`
    with last as (select window_last as month from product_cost_refreshes),
    firsts as (
      select product_id, date_trunc('month', min(cost_date)::timestamp)::date as month from product_daily_costs d
      where d.cost_date >= (select window_first from product_cost_refreshes) and d.cost_date < (select (window_last + interval '1 month')::date from product_cost_refreshes)
      group by 1
    ),
    grid as (
      select g.month::date as month, f.product_id
      from firsts f cross join last cross join generate_series(f.month, last.month, interval '1 month') as g(month)
    ),
    expected as (
      select g.month, g.product_id,
        (select count(*)::int from product_daily_costs d where d.product_id = g.product_id and d.cost_date < g.month and ${inWindow}),
        ${COLUMNS.map(before).join(", ")},
        ${mask("true")}, ${COLUMNS.map((c) => mask(`${value(c)} is not null`)).join(", ")},
        ${COLUMNS.map(running).join(", ")}
      from grid g
    ),
    kept as (select * from product_cost_months)
    (select 'missing or wrong' as problem, * from expected except all select 'missing or wrong', * from kept)
    union all
    (select 'stale', * from kept except all select 'stale', * from expected)
    limit 5`)),
  ];
}

/** Rendered answers that differ from their period's naive rows (none when right). */
export async function answerDrift(sql: Sql): Promise<unknown[]> {
  const answers = await sql<{ period: string; period_start: string; segment: Segment; body: string }[]>`
    select period, period_start::text, segment, '[' || string_agg(body, '' order by chunk) || ']' as body
    from product_cost_answers group by 1, 2, 3 order by 2, 1, 3`;
  const wrong: unknown[] = [];
  for (const a of answers) {
    const months = a.period === "month" ? 1 : a.period === "quarter" ? 3 : 12;
    const start = new Date(`${a.period_start}T00:00:00Z`);
    const end = new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + months, 0)).toISOString().slice(0, 10);
    const expected = await naiveAnswer(sql, a.period_start, end, a.segment);
    if (a.body !== expected) wrong.push({ period: a.period, start: a.period_start, segment: a.segment, rendered: a.body.slice(0, 300), expected: expected.slice(0, 300) });
  }
  return wrong;
}
