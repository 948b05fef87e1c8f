-- The refresh's record (product_cost_refreshes, 0006) also says when the refresh running now,
-- or the last one, started: a refresh records its start in a transaction of its own, then
-- works in steps that each commit, and records its end. With the advisory lock it holds while
-- it runs (pg_locks), GET /metrics tells a refresh that has run for long
-- (product_cost_export_rollup_refresh_running_seconds) from one that is not running, and
-- shows the last one's duration. A refresh that has started but never finished has no
-- finished_at.
alter table product_cost_refreshes add column if not exists started_at timestamptz;
alter table product_cost_refreshes alter column finished_at drop not null;

-- The months keep a tenth of each page free (new pages and rewritten rows only; no rewrite
-- now). Rows are about 800 bytes at a month's end, so a full page keeps a few hundred bytes
-- unused: with every page full to the brim, a new month's small rows (the ETL's month turn)
-- went into those gaps, one row per page all over the table (36,000 pages dirtied for 50,000
-- rows, 1.5 s), and the current month's rows, rewritten every day, moved page each time.
-- With the room kept, new rows go to pages of their own, in key order, and a day appended to
-- a row often stays on its page (0.26 s for the same insert, vacuum 0.5 s -> 0.03 s).
alter table product_cost_months set (fillfactor = 90);
