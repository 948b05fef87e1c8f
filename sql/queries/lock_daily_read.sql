-- The first statement of a read of the daily rows (src/reads/read.ts), as lock_rollup_read.sql for
-- the rollup: the two tables product_costs_daily.sql and product_costs_one_day.sql read, locked
-- before the snapshot, products first.
lock table only products, product_daily_costs in access share mode
