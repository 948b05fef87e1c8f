-- A rebuild's second pass: the totals to date of every product from the own totals of its
-- months (refresh_months): a row for every month from the product's first with data through
-- $1 (the last month of all data), each the running sum from the first month.
--   $1 last month (date)
insert into product_month_costs
with firsts as (select product_id, min(month) as first_month from refresh_months group by 1),
grid as (
  select f.product_id, g.month::date as month
  from firsts f, generate_series(f.first_month, $1::date, interval '1 month') as g(month)
)
select
  g.month, g.product_id,
  sum(coalesce(m.row_count, 0)) over w,
  sum(coalesce(m.pc, 0)) over w, sum(coalesce(m.pcn, 0)) over w,
  sum(coalesce(m.fr, 0)) over w, sum(coalesce(m.frn, 0)) over w,
  sum(coalesce(m.sh, 0)) over w, sum(coalesce(m.shn, 0)) over w,
  sum(coalesce(m.wf, 0)) over w, sum(coalesce(m.wfn, 0)) over w
from grid g
left join refresh_months m on m.product_id = g.product_id and m.month = g.month
window w as (partition by g.product_id order by g.month)
order by 1, 2
