// The oracle the rollup's tests compare with: the naive GROUP BY over the daily rows
// (tests/db/naive_product_costs.sql) rendered as the service renders rows, and checks that
// the refresh's materializations (the totals to date, the rendered answers) equal a fresh
// aggregate of the daily rows.

import type { ProductCostRow } from "../../src/db/product-costs.ts";
import { rowsJson } from "../../src/http/row-json.ts";
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

/** Rows where the totals to date differ from a fresh aggregate of the daily rows (none when right). */
export async function totalsDrift(sql: Sql): Promise<unknown[]> {
  const money = (c: string) => `coalesce(sum(nullif(d.${c}, 'NaN')), 0) as ${c}, count(nullif(d.${c}, 'NaN')) as ${c}_count`;
  return [
    ...(await sql.unsafe(`
    with last as (select max(month) as month from product_month_costs),
    firsts as (select product_id, date_trunc('month', min(cost_date)::timestamp)::date as month from product_daily_costs group by 1),
    expected as (
      select g.month::date as month, f.product_id, count(d.product_id) as rows, ${COLUMNS.map(money).join(", ")}
      from firsts f cross join last
      cross join generate_series(f.month, last.month, interval '1 month') as g(month)
      left join product_daily_costs d on d.product_id = f.product_id and d.cost_date < (g.month + interval '1 month')::date
      group by 1, 2
    ),
    kept as (select * from product_month_costs)
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
