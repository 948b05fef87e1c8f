-- Deterministic benchmark data for the contract tables (products, product_daily_costs).
--
--   psql -v products=50000 -f tests/bench/generate.sql postgres://postgres@127.0.0.1:5432/pce_bench_50k
--
-- Expects the contract tables to exist and be empty (the bench creates them from
-- sql/migrations/0001 only, so that `migrate` later meets "an existing database with
-- millions of daily rows", as a production ETL database would be).
--
-- Shape: :products products; 730 days ending 2026-10-31 (2024-11-01 .. 2026-10-31);
-- about 30% of product-days have a row; about 10% sample products, 5% unmapped (no ERP
-- id or SKU); each amount about 3% null, 2% zero, otherwise a positive decimal with up to
-- 6 places. Every value comes from an integer hash of (product, day, salt), never from
-- random(), so two runs (and two machines) produce the same rows.
-- Rows are inserted day by day, product by product, as a daily ETL would append them.

\set ON_ERROR_STOP on
set client_min_messages = warning;

-- Every value is hashint8extended(key, salt): PostgreSQL's own 64-bit integer hash (C,
-- fast, the same on every platform), masked to 31 bits. key = product id * 1024 + day.

insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
select
  p,
  case when unmapped then null else 100000000 + h2 % 900000000 end,
  case when unmapped then null else 'SKU-' || lpad(upper(to_hex(h3)), 8, '0') end,
  case when h4 % 50 = 0 then null else 'Product ' || p end,
  h1 % 100 < 10
from generate_series(1, :products::bigint) as p,
     lateral (select hashint8extended(p * 1024, 1) & 2147483647 as h1,
                     hashint8extended(p * 1024, 2) & 2147483647 as h2,
                     hashint8extended(p * 1024, 3) & 2147483647 as h3,
                     hashint8extended(p * 1024, 4) & 2147483647 as h4,
                     (hashint8extended(p * 1024, 5) & 2147483647) % 100 < 5 as unmapped) h;

-- Bulk load without the primary key's index, then build it once (much faster than
-- maintaining it row by row); the end state is the contract table as created.
alter table product_daily_costs drop constraint product_daily_costs_pkey;

insert into product_daily_costs
  (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
select
  p,
  date '2024-11-01' + d::int,
  -- one amount from its hash h: ~3% null, ~2% zero, else 0.01 .. 5000.00 (every 7th with 6 places)
  case when h11 % 100 < 3 then null when h11 % 100 < 5 then 0
       when h11 % 7 = 0 then round((h11 >> 3)::numeric / 1000000 % 5000, 6) else ((h11 >> 3) % 500000 + 1)::numeric / 100 end,
  case when h12 % 100 < 3 then null when h12 % 100 < 5 then 0
       when h12 % 7 = 0 then round((h12 >> 3)::numeric / 1000000 % 5000, 6) else ((h12 >> 3) % 500000 + 1)::numeric / 100 end,
  case when h13 % 100 < 3 then null when h13 % 100 < 5 then 0
       when h13 % 7 = 0 then round((h13 >> 3)::numeric / 1000000 % 5000, 6) else ((h13 >> 3) % 500000 + 1)::numeric / 100 end,
  case when h14 % 100 < 3 then null when h14 % 100 < 5 then 0
       when h14 % 7 = 0 then round((h14 >> 3)::numeric / 1000000 % 5000, 6) else ((h14 >> 3) % 500000 + 1)::numeric / 100 end
from generate_series(0, 729::bigint) as d,
     generate_series(1, :products::bigint) as p,
     lateral (select hashint8extended(p * 1024 + d, 11) & 2147483647 as h11,
                     hashint8extended(p * 1024 + d, 12) & 2147483647 as h12,
                     hashint8extended(p * 1024 + d, 13) & 2147483647 as h13,
                     hashint8extended(p * 1024 + d, 14) & 2147483647 as h14) h
where (hashint8extended(p * 1024 + d, 10) & 2147483647) % 100 < 30
order by d, p;

alter table product_daily_costs add primary key (product_id, cost_date);
