-- One refresh at a time: every refresh (the timer's, the service's own, migrate's, load-csv's)
-- takes this advisory lock on its session for its whole run (classid 0, objid 74201312:
-- rollup_lag.sql finds a refresh running by it). Waits for the one running.
--   $1 the lock's id (REFRESH_LOCK_ID of src/rollup/refresh.ts)
select pg_advisory_lock($1::bigint)
