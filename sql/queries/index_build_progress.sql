-- What an index build of this database is doing now, from PostgreSQL's own progress view,
-- for migrate's heartbeat (index builds are a migration's long steps on a large database).
-- No row when none runs. Read on a session other than the one building.
--   command, phase             as the view names them ("CREATE INDEX", "building index: scanning table");
--   blocksDone, blocksTotal    table blocks scanned, of all (0 of 0 outside a table scan);
--   tuplesDone, tuplesTotal    rows sorted or loaded into the index, of all.
select command, phase,
       blocks_done::float8 as "blocksDone", blocks_total::float8 as "blocksTotal",
       tuples_done::float8 as "tuplesDone", tuples_total::float8 as "tuplesTotal"
from pg_stat_progress_create_index
where datname = current_database()
