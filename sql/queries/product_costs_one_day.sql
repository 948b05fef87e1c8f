-- Product cost rows for GET /external/v1/product-costs when month_from = month_to: one day.
--
-- Parameters: $1 the day (date), $2 segment: 'normal', 'sample' or 'all'.
-- Same columns, values and order as sql/queries/product_costs.sql. The primary key
-- (product_id, cost_date) allows one daily row per product and day, so a product's sum over
-- the day is its row as it is: no aggregate, and no part of the rollup is of any use. A NaN
-- amount is not costed (null), as it is in a sum.
select
  p.erp_product_id,
  p.erp_sku,
  p.product_name,
  trim_scale(nullif(d.purchase_cost_usd, 'NaN'))        as purchase_cost_usd,
  trim_scale(nullif(d.inbound_freight_usd, 'NaN'))      as inbound_freight_usd,
  trim_scale(nullif(d.shipping_to_customer_usd, 'NaN')) as shipping_to_customer_usd,
  trim_scale(nullif(d.warehouse_fees_usd, 'NaN'))       as warehouse_fees_usd
from product_daily_costs d
join products p on p.product_id = d.product_id
where d.cost_date = $1::date
  and ($2::text = 'all' or p.is_sample = ($2::text = 'sample'))
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
