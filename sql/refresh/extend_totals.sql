-- When the data reaches a later month, every product's totals to date reach it too (the
-- totals of its last month, carried), so a read can look any month up by equality.
--   $1 the previous last month (date)   $2 the new last month (date)
insert into product_month_costs
select g.month::date, t.product_id, t.rows_to_date,
  t.purchase_cost_usd_to_date, t.purchase_cost_usd_count_to_date,
  t.inbound_freight_usd_to_date, t.inbound_freight_usd_count_to_date,
  t.shipping_to_customer_usd_to_date, t.shipping_to_customer_usd_count_to_date,
  t.warehouse_fees_usd_to_date, t.warehouse_fees_usd_count_to_date
from product_month_costs t,
     generate_series(($1::date + interval '1 month'), $2::date, interval '1 month') as g(month)
where t.month = $1::date
on conflict (month, product_id) do nothing
