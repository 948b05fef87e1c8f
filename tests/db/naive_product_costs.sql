-- The oracle of tests/db/rollup-property.test.ts: the product cost rows computed the plain
-- way, one GROUP BY over every daily row of the range, a NaN amount counted as null (as the
-- README documents). Same parameters, columns and order as sql/queries/product_costs.sql.
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
    sum(nullif(d.purchase_cost_usd, 'NaN'))        as purchase_cost_usd,
    sum(nullif(d.inbound_freight_usd, 'NaN'))      as inbound_freight_usd,
    sum(nullif(d.shipping_to_customer_usd, 'NaN')) as shipping_to_customer_usd,
    sum(nullif(d.warehouse_fees_usd, 'NaN'))       as warehouse_fees_usd
  from product_daily_costs d
  where d.cost_date between $1::date and $2::date
  group by d.product_id
) c
join products p on p.product_id = c.product_id
where $3::text = 'all' or p.is_sample = ($3::text = 'sample')
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
