-- The notes of everything waiting (a TRUNCATE's, a rebuild's own): a rebuild folds those it
-- started with, and leaves them all when another came while it ran.
select count(*)::int as n from product_cost_deltas where product_id is null
