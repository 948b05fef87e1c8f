-- Demo dataset for the embedded database: 300 products and a year of daily costs
-- ending on the day it is loaded (build.sh loads it once at build time).
-- Deterministic: every choice comes from md5 of the product id and the day's distance
-- from the end, so the same relative range (say, the last 7 days) gives the same rows
-- on any day and any PostgreSQL.
--   products:  ~10% samples, 5% unmapped (no ERP id/SKU), 4% without a name
--   daily:     ~45% of product-days have a row; per amount ~3% null (not costed), ~2% zero
-- Replaces whatever demo or other data the two contract tables held.

truncate product_daily_costs, products;

insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
select
  id,
  case when id % 20 = 0 then null else 100000 + id end,
  case when id % 20 = 0 then null else 'SKU-' || lpad(id::text, 5, '0') end,
  case when id % 25 = 7 then null
       else (array['Walnut', 'Linen', 'Copper', 'Slate', 'Cedar', 'Indigo', 'Amber', 'Birch', 'Coral', 'Olive'])[1 + id % 10]
            || ' ' ||
            (array['Desk Lamp', 'Throw Pillow', 'Serving Tray', 'Wall Clock', 'Plant Pot', 'Table Runner',
                   'Candle Set', 'Storage Box', 'Bath Towel', 'Coffee Mug', 'Picture Frame', 'Door Mat'])[1 + (id / 10) % 12]
            || case when id % 10 = 3 then ' (sample)' else '' end
  end,
  id % 10 = 3
from generate_series(1, 300) as id;

with days as (
  select p.product_id, d::date as cost_date,
         -- 32 pseudo-random bits per product-day, and one more draw per amount
         ('x' || substr(md5(p.product_id || ':' || (current_date - d::date)), 1, 8))::bit(32)::bigint as h
  from products p
  cross join generate_series(current_date - 364, current_date, interval '1 day') as d
),
kept as (
  select product_id, cost_date, h from days where h % 100 < 45
),
draws as (
  select product_id, cost_date,
         ('x' || substr(md5('p' || h), 1, 8))::bit(32)::bigint as hp,
         ('x' || substr(md5('i' || h), 1, 8))::bit(32)::bigint as hi,
         ('x' || substr(md5('s' || h), 1, 8))::bit(32)::bigint as hs,
         ('x' || substr(md5('w' || h), 1, 8))::bit(32)::bigint as hw
  from kept
)
insert into product_daily_costs
  (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
select
  product_id, cost_date,
  case when hp % 100 < 3 then null when hp % 100 < 5 then 0 else round(5 + (hp % 19500) / 100.0, 2) end,
  case when hi % 100 < 3 then null when hi % 100 < 5 then 0 else round(0.5 + (hi % 19500) / 1000.0, 3) end,
  case when hs % 100 < 3 then null when hs % 100 < 5 then 0 else round(1 + (hs % 2900) / 100.0, 2) end,
  case when hw % 100 < 3 then null when hw % 100 < 5 then 0 else round(0.1 + (hw % 490000) / 100000.0, 6) end
from draws;

-- The mark that this database holds the demo: a data dir started once with --demo-data serves
-- made-up costs at every later start too, and every answer keeps saying so (X-Demo-Data).
create table if not exists product_cost_export_demo_data (loaded_on date not null);
truncate product_cost_export_demo_data;
insert into product_cost_export_demo_data values (current_date);
