-- Before month_rows.sql writes a month past the rollup's last one (the step that adds months):
-- the products whose first changed month it is start being carried, with their totals through
-- the month before (that month's row; none: nothing). (In the months the rollup has, a product
-- starts from its own row there: month_rows.sql.) Found as the step was told ($3): few products, each row by its key (a subquery per product,
-- an index probe whatever the statistics say); many (dense in the step's ids, $4 through $5),
-- the month's rows of those ids read in key order and hashed (one pass; nested loops are off).
--   $1 the month (its first day)   $2 the month before   $3 dense (boolean)
--   $4 the step's first product id   $5 its last
insert into refresh_carry
select
  f.product_id,
  coalesce((f.b).rows_before + bit_count((f.b).days::bit(32))::int, 0),
  coalesce((f.b).purchase_cost_usd_before + coalesce(((f.b).purchase_cost_usd)[cardinality((f.b).purchase_cost_usd)], 0), 0),
  coalesce((f.b).purchase_cost_usd_count_before + bit_count((f.b).purchase_cost_usd_days::bit(32))::int, 0),
  coalesce((f.b).inbound_freight_usd_before + coalesce(((f.b).inbound_freight_usd)[cardinality((f.b).inbound_freight_usd)], 0), 0),
  coalesce((f.b).inbound_freight_usd_count_before + bit_count((f.b).inbound_freight_usd_days::bit(32))::int, 0),
  coalesce((f.b).shipping_to_customer_usd_before + coalesce(((f.b).shipping_to_customer_usd)[cardinality((f.b).shipping_to_customer_usd)], 0), 0),
  coalesce((f.b).shipping_to_customer_usd_count_before + bit_count((f.b).shipping_to_customer_usd_days::bit(32))::int, 0),
  coalesce((f.b).warehouse_fees_usd_before + coalesce(((f.b).warehouse_fees_usd)[cardinality((f.b).warehouse_fees_usd)], 0), 0),
  coalesce((f.b).warehouse_fees_usd_count_before + bit_count((f.b).warehouse_fees_usd_days::bit(32))::int, 0)
from (
  select p.product_id, (select b from product_cost_months b where b.month = $2::date and b.product_id = p.product_id) as b
  from refresh_products p
  where not $3::boolean and p.first_month = $1::date
  union all
  select p.product_id, b
  from refresh_products p
  left join product_cost_months b on b.month = $2::date and b.product_id between $4::bigint and $5::bigint and b.product_id = p.product_id
  where $3::boolean and p.first_month = $1::date
) f
