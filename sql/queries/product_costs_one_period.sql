-- Product cost rows for a range that is exactly one calendar month, quarter or year: the
-- same rows, columns and order as sql/queries/product_costs.sql returns for that range,
-- read as they are from the rollup (migration 0003), one row per product with daily rows
-- in the period. The rollup rows carry copies of their product's attributes (migration
-- 0004), and product_period_costs_output_order_idx holds each period in the response's
-- order, so this is one index scan: no join, no sort, and the first rows can be sent
-- while the last are still being read.
--
-- Parameters:
--   $1 period: 'month', 'quarter' or 'year'    $2 period_start: its first day (date)
--   $3 segment: 'normal' (is_sample = false), 'sample' (is_sample = true) or 'all'
-- An amount is null when none of the period's values is (its count of non-null values is 0).
select
  r.erp_product_id,
  r.erp_sku,
  r.product_name,
  trim_scale(case when r.purchase_cost_usd_count > 0 then r.purchase_cost_usd_sum end)               as purchase_cost_usd,
  trim_scale(case when r.inbound_freight_usd_count > 0 then r.inbound_freight_usd_sum end)           as inbound_freight_usd,
  trim_scale(case when r.shipping_to_customer_usd_count > 0 then r.shipping_to_customer_usd_sum end) as shipping_to_customer_usd,
  trim_scale(case when r.warehouse_fees_usd_count > 0 then r.warehouse_fees_usd_sum end)             as warehouse_fees_usd
from product_period_costs r
where r.period = $1::text and r.period_start = $2::date
  and ($3::text = 'all' or r.is_sample = ($3::text = 'sample'))
order by r.erp_sku collate "C" nulls last, r.erp_product_id, r.product_id
