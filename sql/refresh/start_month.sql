-- Before write_month.sql writes a month: the products whose first changed month it is start
-- being carried, with their totals through the month before (that month's row; none: nothing).
--   $1 the month (its first day)
insert into refresh_carry
select
  p.product_id,
  coalesce(b.rows_before + bit_count(b.days::bit(32))::int, 0),
  coalesce(b.purchase_cost_usd_before + coalesce(b.purchase_cost_usd[cardinality(b.purchase_cost_usd)], 0), 0),
  coalesce(b.purchase_cost_usd_count_before + bit_count(b.purchase_cost_usd_days::bit(32))::int, 0),
  coalesce(b.inbound_freight_usd_before + coalesce(b.inbound_freight_usd[cardinality(b.inbound_freight_usd)], 0), 0),
  coalesce(b.inbound_freight_usd_count_before + bit_count(b.inbound_freight_usd_days::bit(32))::int, 0),
  coalesce(b.shipping_to_customer_usd_before + coalesce(b.shipping_to_customer_usd[cardinality(b.shipping_to_customer_usd)], 0), 0),
  coalesce(b.shipping_to_customer_usd_count_before + bit_count(b.shipping_to_customer_usd_days::bit(32))::int, 0),
  coalesce(b.warehouse_fees_usd_before + coalesce(b.warehouse_fees_usd[cardinality(b.warehouse_fees_usd)], 0), 0),
  coalesce(b.warehouse_fees_usd_count_before + bit_count(b.warehouse_fees_usd_days::bit(32))::int, 0)
from refresh_products p
left join product_cost_months b on b.month = ($1::date - interval '1 month')::date and b.product_id = p.product_id
where p.first_month = $1::date
