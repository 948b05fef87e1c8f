-- When the data reaches a later month, every product's months reach it too: rows that carry
-- the totals through the previous last month and hold no day, so a read can look any month
-- up by equality. (A product changed since is computed again by update_months.sql.)
--   $1 the previous last month (date)   $2 the new last month (date)
insert into product_cost_months
select g.month::date, t.product_id,
  t.rows_before + bit_count(t.days::bit(32))::int,
  t.purchase_cost_usd_before + coalesce(t.purchase_cost_usd[cardinality(t.purchase_cost_usd)], 0),
  t.purchase_cost_usd_count_before + bit_count(t.purchase_cost_usd_days::bit(32))::int,
  t.inbound_freight_usd_before + coalesce(t.inbound_freight_usd[cardinality(t.inbound_freight_usd)], 0),
  t.inbound_freight_usd_count_before + bit_count(t.inbound_freight_usd_days::bit(32))::int,
  t.shipping_to_customer_usd_before + coalesce(t.shipping_to_customer_usd[cardinality(t.shipping_to_customer_usd)], 0),
  t.shipping_to_customer_usd_count_before + bit_count(t.shipping_to_customer_usd_days::bit(32))::int,
  t.warehouse_fees_usd_before + coalesce(t.warehouse_fees_usd[cardinality(t.warehouse_fees_usd)], 0),
  t.warehouse_fees_usd_count_before + bit_count(t.warehouse_fees_usd_days::bit(32))::int,
  0, 0, 0, 0, 0, '{}', '{}', '{}', '{}'
from product_cost_months t,
     generate_series(($1::date + interval '1 month'), $2::date, interval '1 month') as g(month)
where t.month = $1::date
order by 1, 2
