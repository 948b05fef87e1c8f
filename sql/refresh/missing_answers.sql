-- The calendar months, quarters and years that overlap the months of the totals to date and
-- have no rendered answer (dropped just now, or never rendered: an interrupted refresh
-- heals here), latest first: the refresh renders them next.
with span as (
  select min(month) as first_month, max(month) as last_month from product_month_costs
),
periods as (
  select distinct l.period, date_trunc(l.period, g.month)::date as period_start
  from span, generate_series(span.first_month, span.last_month, interval '1 month') as g(month)
  cross join (values ('month'), ('quarter'), ('year')) as l(period)
)
select p.period, p.period_start::text
from periods p
where not exists (select 1 from product_cost_answers a where a.period = p.period and a.period_start = p.period_start)
order by p.period_start desc, p.period
