-- When the data reaches a later month, every product's months reach it too, in the first fold
-- step (the one that moves the rollup's last month): each product this step does not write
-- gets rows that carry its totals through the previous last month and hold no day, so a read
-- can look any month up by equality; the products it writes get theirs from the step itself.
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
  and not exists (select from refresh_products p where p.product_id = t.product_id)
order by 1, 2
