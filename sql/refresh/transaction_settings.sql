-- The settings of each transaction of the refresh (set local: they end with it). Room to add up
-- millions of rows in memory; no JIT (it compiled each of these statements for over a second);
-- every join hashes unless written as a lookup by key (the header of month_rows.sql); custom
-- plans, so that a statement's switches ($3 of month_rows.sql) prune what it does not do.
select set_config('work_mem', '64MB', true), set_config('jit', 'off', true), set_config('enable_nestloop', 'off', true),
       set_config('random_page_cost', '1.1', true), set_config('plan_cache_mode', 'force_custom_plan', true)
