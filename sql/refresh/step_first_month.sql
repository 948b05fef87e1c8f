-- The first month a step folds: the earliest its products' changes name (refresh_products,
-- prepare_writes.sql).
select min(first_month)::text as first from refresh_products
