-- How far the rollup lags behind the writers, for GET /metrics and /readyz (read at scrape
-- time, on the readiness session):
--   changes_waiting                notes in product_cost_deltas the refresh has not folded in
--                                  (counted up to a million: enough to tell, bounded to read);
--   last_refresh_age_seconds       seconds since the last refresh committed, by the database's
--                                  clock (null: none has run since migration 0006);
--   last_refresh_duration_seconds  how long that refresh took (null: none has run);
--   refresh_running_seconds        how long the refresh running now has run (0: none runs): a
--                                  refresh holds its advisory lock (src/rollup/refresh.ts,
--                                  REFRESH_LOCK_ID: classid 0, objid the id) while it runs and
--                                  records its start first (migration 0008).
--   refresh_failing                the last refresh could not fold some products' notes (a step
--                                  failed and was narrowed down to them, migration 0013).
-- A refresh records itself even when there was nothing to fold, so with the timer running
-- the age stays under its period plus a refresh's own time.
select
  (select count(*) from (select from product_cost_deltas limit 1000000) as waiting)::int as changes_waiting,
  (select extract(epoch from now() - finished_at)::float8 from product_cost_refreshes) as last_refresh_age_seconds,
  (select ms / 1000.0 from product_cost_refreshes where finished_at is not null)::float8 as last_refresh_duration_seconds,
  coalesce((select failure is not null from product_cost_refreshes), false) as refresh_failing,
  coalesce((
    select greatest(extract(epoch from clock_timestamp() - r.started_at), 0)
    from product_cost_refreshes r
    where r.started_at > coalesce(r.finished_at, '-infinity')
      and exists (
        select from pg_locks l
        where l.locktype = 'advisory' and l.granted and l.classid = 0 and l.objid = 74201312 and l.objsubid = 1
          and l.database = (select oid from pg_database where datname = current_database()))
  ), 0)::float8 as refresh_running_seconds
