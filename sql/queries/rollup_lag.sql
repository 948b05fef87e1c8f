-- How far the rollup lags behind the writers, for GET /metrics and /readyz (read at scrape
-- time, on the readiness session):
--   changes_waiting           notes in product_cost_deltas the refresh has not folded in
--                             (counted up to a million: enough to tell, bounded to read);
--   last_refresh_age_seconds  seconds since the last refresh committed, by the database's
--                             clock (null: none has run since migration 0006).
-- A refresh records itself even when there was nothing to fold, so with the timer running
-- the age stays under its period plus a refresh's own time.
select
  (select count(*) from (select from product_cost_deltas limit 1000000) as waiting)::int as changes_waiting,
  (select extract(epoch from now() - finished_at)::float8 from product_cost_refreshes) as last_refresh_age_seconds
