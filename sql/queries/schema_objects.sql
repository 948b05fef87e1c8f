-- The objects in the public schema besides the contract's two tables (products,
-- product_daily_costs) and their primary keys: what `migrate` made, for `migrate --dry-run`
-- (it names those it would make, src/rollup/migration-objects.ts) and its test. Partitions are
-- left out: the refresh makes one per month of data, under product_cost_months.
--   kind: table, index, function, trigger (on: its table) or other (a view, sequence, type)
select kind, name, coalesce(on_table, '') as on_table
from (
  select 'table' as kind, c.relname::text as name, null::text as on_table
  from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition
    and c.relname not in ('products', 'product_daily_costs')
  union all
  select 'index', c.relname::text, t.relname::text
  from pg_index i
  join pg_class c on c.oid = i.indexrelid
  join pg_class t on t.oid = i.indrelid
  where c.relnamespace = 'public'::regnamespace and not c.relispartition
    and c.relname not in ('products_pkey', 'product_daily_costs_pkey')
  union all
  select 'function', p.proname::text, null
  from pg_proc p
  where p.pronamespace = 'public'::regnamespace
  union all
  -- A trigger counts only when it fires in every session (ENABLE ALWAYS, migration 0014): one
  -- disabled by hand, or enabled for ordinary sessions only, leaves writes unnoted, and is made
  -- again as one dropped would be.
  select 'trigger', t.tgname::text, t.tgrelid::regclass::text
  from pg_trigger t
  join pg_class c on c.oid = t.tgrelid
  where not t.tgisinternal and c.relnamespace = 'public'::regnamespace and t.tgenabled = 'A'
  union all
  select 'other', c.relname::text, null
  from pg_class c
  where c.relnamespace = 'public'::regnamespace and c.relkind in ('v', 'm', 'S', 'f')
) o
order by kind, name
