-- The months the rollup keeps (migration 0013), found from the data by a rebuild: the dates a
-- request can name (0001-01-01 to 9999-12-31) grouped into runs where no two dates that follow
-- each other lie more than $1 months apart; the run with the most days (of two alike, the
-- later) is the window, from its first month through its last. Every other date (a sentinel
-- such as 9999-12-31 or 0001-01-01, a year typed wrong, a system's placeholder, `infinity`) is
-- outside: its rows are read as they are, never folded into months, so a far date costs the
-- rollup nothing however far it lies. Also the nearest month with rows on either side of the
-- window (null: none): the refresh widens the window over months that only its notes name, and
-- rebuilds instead when the widening would take in rows that no note names.
-- The distinct days are found by a skip scan of the date index (one lookup per day with rows:
-- milliseconds for decades), not a pass over the rows.
--   $1 the longest gap, in months, inside one run (integer)
with recursive days(day) as (
  (select min(cost_date) from product_daily_costs where cost_date >= '0001-01-01' and cost_date <= '9999-12-31')
  union all
  select (select min(d.cost_date) from product_daily_costs d where d.cost_date > days.day and d.cost_date <= '9999-12-31')
  from days
  where days.day is not null
),
indexed as (
  select day, (extract(year from day) * 12 + extract(month from day) - 1)::int as month_index
  from days
  where day is not null
),
runs as (
  select day, month_index,
    sum(case when month_index - previous > $1::int then 1 else 0 end) over (order by day) as run
  from (select day, month_index, coalesce(lag(month_index) over (order by day), month_index) as previous from indexed) d
),
chosen as (
  select run, min(day) as first_day, max(day) as last_day
  from runs
  group by run
  order by count(*) desc, max(day) desc
  limit 1
)
select
  product_cost_month_of(c.first_day)::text as first_month,
  product_cost_month_of(c.last_day)::text as last_month,
  (select product_cost_month_of(max(day)) from indexed where day < c.first_day)::text as outside_before,
  (select product_cost_month_of(min(day)) from indexed where day > c.last_day)::text as outside_after
from (select 1) one
left join chosen c on true
