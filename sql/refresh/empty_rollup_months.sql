-- A rebuild's start: every month row deleted (DELETE, not TRUNCATE: reads keep the old rows
-- until the rebuild's first commit, and never wait for it).
delete from product_cost_months
