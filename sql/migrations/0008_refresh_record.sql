-- The refresh's record (product_cost_refreshes, 0006) also says when the refresh running now,
-- or the last one, started: a refresh records its start in a transaction of its own, then
-- works in steps that each commit, and records its end. With the advisory lock it holds while
-- it runs (pg_locks), GET /metrics tells a refresh that has run for long
-- (product_cost_export_rollup_refresh_running_seconds) from one that is not running, and
-- shows the last one's duration. A refresh that has started but never finished has no
-- finished_at.
alter table product_cost_refreshes add column if not exists started_at timestamptz;
alter table product_cost_refreshes alter column finished_at drop not null;
