-- The end of a refresh's run (lock.sql).
--   $1 the lock's id
select pg_advisory_unlock($1::bigint)
