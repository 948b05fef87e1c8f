-- Product cost rows for GET /external/v1/product-costs.
--
-- Parameters:
--   $1 month_from (date, inclusive)   $2 month_to (date, inclusive)
--   $3 segment: 'normal' (is_sample = false), 'sample' (is_sample = true) or 'all'
-- Returns one row per product with at least one product_daily_costs row whose
-- cost_date lies in [$1, $2]. Each amount is the SQL SUM of its column over those rows,
-- so it is null only when every value is null (not costed) and 0 for a costed zero.
-- trim_scale drops the numeric(20,6) trailing zeros so the text is the shortest exact
-- decimal (100.5, not 100.500000). Ids and amounts come back as exact text.
-- Order: erp_sku in byte order (collate "C", the same on every server and locale),
-- nulls last, then erp_product_id, then the internal product_id.
select
  p.erp_product_id,
  p.erp_sku,
  p.product_name,
  trim_scale(c.purchase_cost_usd)        as purchase_cost_usd,
  trim_scale(c.inbound_freight_usd)      as inbound_freight_usd,
  trim_scale(c.shipping_to_customer_usd) as shipping_to_customer_usd,
  trim_scale(c.warehouse_fees_usd)       as warehouse_fees_usd
from (
  select
    d.product_id,
    sum(d.purchase_cost_usd)        as purchase_cost_usd,
    sum(d.inbound_freight_usd)      as inbound_freight_usd,
    sum(d.shipping_to_customer_usd) as shipping_to_customer_usd,
    sum(d.warehouse_fees_usd)       as warehouse_fees_usd
  from product_daily_costs d
  where d.cost_date between $1::date and $2::date
  group by d.product_id
) c
join products p on p.product_id = c.product_id
where $3::text = 'all' or p.is_sample = ($3::text = 'sample')
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
