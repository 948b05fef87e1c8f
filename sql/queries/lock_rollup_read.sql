-- The first statement of a read of the rollup (src/reads/read.ts), in its read-only REPEATABLE READ
-- transaction: the tables its statements read, locked before the snapshot is taken (LOCK takes
-- no snapshot; the next statement, the answer's version, does). ACCESS SHARE is the lock any
-- SELECT takes: writers never wait for it; a DROP or an ALTER TABLE does. So no partition the
-- snapshot sees rows in is dropped before the rows' plan is made (issue 52). ONLY: the months'
-- partitions are locked by the plan, after the parent. The ETL's two tables first, products
-- before product_daily_costs, the order in which an ETL that alters both takes them.
lock table only products, product_daily_costs, product_cost_deltas, product_cost_folded_changes,
  product_cost_refreshes, product_cost_months, product_cost_answers in access share mode
