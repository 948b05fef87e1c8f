-- A range's daily rows outside the rollup's window of months (a sentinel such as 9999-12-31, a
-- year typed wrong: migration 0013), added up per product as they are (issue 53's design: a
-- range from two edges, product_costs_edge.sql, plus these). Two ranges of the date index: the
-- range's days before the window, and after it. Same columns as product_costs_edge.sql: one
-- row of arrays (null when no day of the range is outside the window, the usual case).
--
-- Parameters: $1 the range's first day, $2 its last (dates, inclusive).
with facts as not materialized (
  select
    (select window_first from product_cost_refreshes)                              as window_first,
    (select (window_last + interval '1 month')::date from product_cost_refreshes) as window_after
)
select
  array_agg(t.product_id)::text as product_id, array_agg(t.n)::text as n,
  array_agg(t.pc)::text as pc, array_agg(t.pcn)::text as pcn, array_agg(t.fr)::text as fr, array_agg(t.frn)::text as frn,
  array_agg(t.sh)::text as sh, array_agg(t.shn)::text as shn, array_agg(t.wf)::text as wf, array_agg(t.wfn)::text as wfn
from (
  select
    d.product_id, count(*) as n,
    coalesce(sum(nullif(d.purchase_cost_usd, 'NaN')), 0) as pc, count(nullif(d.purchase_cost_usd, 'NaN')) as pcn,
    coalesce(sum(nullif(d.inbound_freight_usd, 'NaN')), 0) as fr, count(nullif(d.inbound_freight_usd, 'NaN')) as frn,
    coalesce(sum(nullif(d.shipping_to_customer_usd, 'NaN')), 0) as sh, count(nullif(d.shipping_to_customer_usd, 'NaN')) as shn,
    coalesce(sum(nullif(d.warehouse_fees_usd, 'NaN')), 0) as wf, count(nullif(d.warehouse_fees_usd, 'NaN')) as wfn
  from (
    select d.* from facts f cross join product_daily_costs d
    where d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date < f.window_first
    union all
    select d.* from facts f cross join product_daily_costs d
    where d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date >= f.window_after
  ) d
  group by d.product_id
) t
