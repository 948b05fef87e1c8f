-- The PostgreSQL role product-cost-export serves with: it can log in and SELECT the tables
-- the service reads, nothing else. Even a bug or a leaked DATABASE_URL cannot write data
-- or read other tables. Run it once, as the owner of the tables, in the service's database,
-- after `product-cost-export migrate` (run with the owner's URL) has created them. The
-- executable prints this script, so it travels with it:
--
--   product-cost-export print-sql read-only-role | psql "postgres://owner@db.internal/costs" \
--        -v role=product_cost_export -v password="$(openssl rand -hex 24)"
--
-- Tables: the two contract tables the ETL writes (products, product_daily_costs), what the
-- refresh keeps from them, the log of what changed since and the refresh's record
-- (product_cost_months, product_cost_answers, product_cost_deltas, product_cost_refreshes),
-- the counts that make the answers' versions (product_cost_folded_changes),
-- and the record of applied migrations that GET /readyz checks (schema_migrations).
\set ON_ERROR_STOP on

create role :"role" login password :'password'
  nosuperuser nocreatedb nocreaterole noreplication noinherit;
-- Belt and braces: every transaction of this role is read-only, whatever the client asks.
alter role :"role" set default_transaction_read_only = on;

grant connect on database :"DBNAME" to :"role";
grant usage on schema public to :"role";
grant select on products, product_daily_costs, product_cost_months, product_cost_answers, product_cost_deltas, product_cost_refreshes, product_cost_folded_changes, schema_migrations to :"role";
