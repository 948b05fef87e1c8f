-- Which of the service's tables (schema_migrations and the rollup's) it cannot read now
-- (src/reads/read-source.ts): those not there (never made, or dropped by hand), and those the role
-- has no SELECT on. Both empty: the rollup may be read (with every migration of this build
-- applied). Catalog reads only: no table is opened, so it waits for no lock a writer or
-- `migrate` holds, and a table the role may not read is never refused (an ERROR in the log).
--   $1 the tables' names (text[])
select
  array(select t from unnest($1::text[]) t where to_regclass(t) is null order by t) as missing,
  array(select t from unnest($1::text[]) t where not has_table_privilege(to_regclass(t), 'select') order by t) as unreadable
