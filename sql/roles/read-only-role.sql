-- The PostgreSQL role product-cost-export serves with: it can log in and SELECT the tables
-- the service reads, nothing else. Even a bug or a leaked DATABASE_URL cannot write data
-- or read other tables. Run it once, as the owner of the tables, in the service's database,
-- before or after `product-cost-export migrate`. The executable prints this script, so it
-- travels with it:
--
--   product-cost-export print-sql read-only-role | psql "postgres://owner@db.internal/costs" \
--        -v role=product_cost_export -v password="$(openssl rand -hex 24)"
--
-- Tables: the two contract tables the ETL writes (products, product_daily_costs): with them
-- alone the service reads the daily rows directly (docs/database.md). Where `migrate` has run:
-- what the refresh keeps from them, the log of what changed since and the refresh's record
-- (product_cost_months, product_cost_answers, product_cost_deltas, product_cost_refreshes),
-- the counts that make the answers' versions (product_cost_folded_changes), and the record of
-- applied migrations (schema_migrations). Run before `migrate`, it grants the first two: `migrate`
-- grants the role the rest as it makes them (sql/roles/readers-follow.sql), and the service
-- turns to the rollup by itself.
\set ON_ERROR_STOP on

create role :"role" login password :'password'
  nosuperuser nocreatedb nocreaterole noreplication noinherit;
-- Belt and braces: every transaction of this role is read-only, whatever the client asks.
alter role :"role" set default_transaction_read_only = on;

grant connect on database :"DBNAME" to :"role";
grant usage on schema public to :"role";
grant select on products, product_daily_costs to :"role";
-- The service's own tables, those `migrate` has made.
select format('grant select on %s to %I', string_agg(quote_ident(t), ', ' order by t), :'role')
from unnest(array['schema_migrations', 'product_cost_months', 'product_cost_deltas', 'product_cost_refreshes',
                  'product_cost_answers', 'product_cost_folded_changes']) t
where to_regclass(t) is not null
having count(*) > 0 \gexec
