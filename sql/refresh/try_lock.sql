-- lock.sql without waiting: false when another refresh runs (the service's own turn skips it).
--   $1 the lock's id
select pg_try_advisory_lock($1::bigint) as locked
