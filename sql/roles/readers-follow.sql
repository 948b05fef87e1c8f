-- Run by `migrate` at the end of the transaction that applied migrations (src/rollup/migrations.ts):
-- whoever may read the daily rows may read every table the service reads. A serving role made
-- before `migrate` (SELECT on the ETL's two tables, for reading the daily rows directly) thus
-- reads the rollup once `migrate` commits, with no new GRANT: the service turns to it by itself
-- (src/reads/read-source.ts). The readers are the roles granted SELECT on product_daily_costs,
-- not PUBLIC and not its owner; the tables are those that exist (an older release's prefix of
-- the migrations makes fewer).
do $grants$
declare
  reader text;
  tables text;
begin
  select string_agg(quote_ident(t), ', ' order by t) into tables
  from unnest(array['schema_migrations', 'product_cost_months', 'product_cost_deltas', 'product_cost_refreshes',
                    'product_cost_answers', 'product_cost_folded_changes']) t
  where to_regclass(t) is not null;
  if tables is null then
    return;
  end if;
  for reader in
    select distinct pg_get_userbyid(a.grantee)
    from pg_class c cross join aclexplode(c.relacl) as a
    where c.oid = 'product_daily_costs'::regclass and a.privilege_type = 'SELECT'
      and a.grantee <> 0 and a.grantee <> c.relowner
  loop
    execute format('grant select on %s to %I', tables, reader);
  end loop;
end
$grants$;
