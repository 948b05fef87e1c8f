-- A range's daily rows outside the rollup's window of months (a sentinel such as 9999-12-31, a
-- year typed wrong: migration 0013), added up per product as they are (issue 53's design: a
-- range from two edges, product_costs_edge.sql, plus these). Two ranges of the date index: the
-- range's days before the window, and after it. Same columns as product_costs_edge.sql.
--
-- Parameters: $1 the range's first day, $2 its last (dates, inclusive).
with facts as not materialized (
  select
    (select window_first from product_cost_refreshes)                              as window_first,
    (select (window_last + interval '1 month')::date from product_cost_refreshes) as window_after
)
select
  d.product_id::text as product_id, count(*)::text as n,
  coalesce(sum(nullif(d.purchase_cost_usd, 'NaN')), 0)::text as pc, count(nullif(d.purchase_cost_usd, 'NaN'))::text as pcn,
  coalesce(sum(nullif(d.inbound_freight_usd, 'NaN')), 0)::text as fr, count(nullif(d.inbound_freight_usd, 'NaN'))::text as frn,
  coalesce(sum(nullif(d.shipping_to_customer_usd, 'NaN')), 0)::text as sh, count(nullif(d.shipping_to_customer_usd, 'NaN'))::text as shn,
  coalesce(sum(nullif(d.warehouse_fees_usd, 'NaN')), 0)::text as wf, count(nullif(d.warehouse_fees_usd, 'NaN'))::text as wfn
from (
  select d.* from facts f cross join product_daily_costs d
  where d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date < f.window_first
  union all
  select d.* from facts f cross join product_daily_costs d
  where d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date >= f.window_after
) d
group by d.product_id
