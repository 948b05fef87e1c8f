-- The calendar months, quarters and years of the rollup that have no rendered answer (dropped
-- just now, or never rendered: an interrupted refresh heals here), latest first: the refresh
-- renders them next. Only periods that end before the rollup's last month: the periods that
-- hold it change with every daily write, so their reads add up the months instead of
-- rendering an answer each refresh that the next write makes stale.
-- Periods that begin before the window's first month (migration 0013) are not rendered:
-- rows before it are never folded, and the months cannot tell the period's whole.
with span as (
  select greatest(min(m.month), (select window_first from product_cost_refreshes)) as first_month, max(m.month) as last_month
  from product_cost_months m
),
periods as (
  select distinct l.period, date_trunc(l.period, g.month)::date as period_start
  from span, generate_series(span.first_month, span.last_month, interval '1 month') as g(month)
  cross join (values ('month'), ('quarter'), ('year')) as l(period)
)
select p.period, p.period_start::text
from periods p, span
where p.period_start >= span.first_month
  and (p.period_start + case p.period when 'month' then interval '1 month' when 'quarter' then interval '3 months' else interval '1 year' end)::date
      <= span.last_month
  and not exists (select 1 from product_cost_answers a where a.period = p.period and a.period_start = p.period_start)
order by p.period_start desc, p.period
