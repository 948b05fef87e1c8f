-- The refresh's start, committed before its first step (migration 0008): with its advisory
-- lock, how long the refresh running now has run.
insert into product_cost_refreshes (started_at, finished_at, notes, ms) values (clock_timestamp(), null, 0, 0)
on conflict (singleton) do update set started_at = excluded.started_at
