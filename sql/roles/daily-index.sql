-- The index the daily rows need to be read by date (the same as migration 0002's), for a DBA
-- who will not run `migrate` on the ETL's tables (issue 44): without it every read of the
-- daily rows scans the whole table. CONCURRENTLY: the ETL's writes go on while it is built
-- (it cannot run inside a transaction block).
--   psql postgres://owner@db/costs -f <(product-cost-export print-sql daily-index)
create index concurrently if not exists product_daily_costs_cost_date_idx
  on product_daily_costs (cost_date);
