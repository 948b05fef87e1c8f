-- A rebuild's first pass: the own totals of every (product, month) with daily rows in
-- [$1, $2), into the refresh's temporary table. Called for one month at a time, in date
-- order (the daily table's own order, as an ETL appends it), to report progress.
--   $1 first day (date)   $2 end day, excluded (date)
insert into refresh_months
select
  d.product_id, date_trunc('month', d.cost_date::timestamp)::date, count(*),
  coalesce(sum(nullif(d.purchase_cost_usd, 'NaN')), 0),        count(nullif(d.purchase_cost_usd, 'NaN')),
  coalesce(sum(nullif(d.inbound_freight_usd, 'NaN')), 0),      count(nullif(d.inbound_freight_usd, 'NaN')),
  coalesce(sum(nullif(d.shipping_to_customer_usd, 'NaN')), 0), count(nullif(d.shipping_to_customer_usd, 'NaN')),
  coalesce(sum(nullif(d.warehouse_fees_usd, 'NaN')), 0),       count(nullif(d.warehouse_fees_usd, 'NaN'))
from product_daily_costs d
where d.cost_date >= $1::date and d.cost_date < $2::date
group by 1, 2
