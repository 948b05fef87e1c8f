-- Product cost rows for GET /external/v1/product-costs read from the daily rows directly: the
-- source where the rollup is not there, not current for this build, or not readable by the
-- service's role (issue 44: a database as the ETL left it, a role that may SELECT the two
-- contract tables alone, a standby of a primary nobody may migrate). The same parameters,
-- columns, order and bytes as sql/queries/product_costs.sql: one GROUP BY over the range's
-- daily rows, each amount the SQL SUM of its column, a NaN counted as null, so null only when no
-- value is a number and 0 for a costed zero; products without a row in the range left out.
-- Its speed is the naive GROUP BY's: the date index (migration 0002; `print-sql daily-index`
-- makes it alone) finds the range's rows.
--   $1 month_from (date, inclusive)   $2 month_to (date, inclusive)   $3 segment
select
  p.erp_product_id,
  p.erp_sku,
  p.product_name,
  trim_scale(c.pc) as purchase_cost_usd,
  trim_scale(c.fr) as inbound_freight_usd,
  trim_scale(c.sh) as shipping_to_customer_usd,
  trim_scale(c.wf) as warehouse_fees_usd
from (
  select
    d.product_id,
    sum(nullif(d.purchase_cost_usd, 'NaN'))        as pc,
    sum(nullif(d.inbound_freight_usd, 'NaN'))      as fr,
    sum(nullif(d.shipping_to_customer_usd, 'NaN')) as sh,
    sum(nullif(d.warehouse_fees_usd, 'NaN'))       as wf
  from product_daily_costs d
  where d.cost_date >= $1::date and d.cost_date <= $2::date
  group by d.product_id
) c
join products p on p.product_id = c.product_id
where $3::text = 'all' or p.is_sample = ($3::text = 'sample')
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
