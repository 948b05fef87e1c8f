-- One `migrate` at a time: every runner takes this transaction's advisory lock first (a second
-- one waits, then finds nothing left to do).
--   $1 the lock's id (MIGRATION_LOCK_ID of src/rollup/migrations.ts)
select pg_advisory_xact_lock($1::bigint)
