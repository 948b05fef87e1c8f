-- Rollup v2: writers only note what they changed; the sums are kept by a refresh, off the
-- writers' path; reads stay exact at their own snapshot whatever the refresh has done.
--
-- Migrations 0003 and 0004 kept a rollup inside every writer's transaction: 50 to 115 µs per
-- affected row, lock waits and deadlocks between writers, renames refused outside READ
-- COMMITTED, a product deleted with its daily rows refused, and a numeric NaN that poisoned
-- a period's sums for good. Their objects go; in their place:
--
--   product_cost_changes   what writers changed since the last refresh: (product, month)
--                          whose sums changed; (product, null) whose attributes changed;
--                          (null, null) everything (TRUNCATE). Appended by statement-level
--                          triggers, one INSERT .. SELECT per statement: no key, no index,
--                          no upsert, so writers never wait on each other or on a refresh,
--                          at any isolation level.
--   product_month_costs    per product and calendar month, the product's totals from its
--                          first month through that month (cumulative): the number of daily
--                          rows and, per amount, the sum of its values and how many there
--                          were. Dense: a row for every month from the product's first to
--                          the last month of all data. Any run of whole months is then the
--                          difference of two rows per product, whatever its length.
--   product_cost_answers   the JSON answer of every calendar month, quarter and year with
--                          data, per segment, rendered by the refresh in chunks of 2,000
--                          rows: one read of an exact period sends them as they are.
--
-- Only the refresh (product-cost-export refresh, or migrate) writes the last two, from the
-- daily rows, in one REPEATABLE READ transaction that then deletes the log rows it saw. A
-- read (one statement, one snapshot) trusts the cumulative rows except for the (product,
-- month) pairs the log names, which it adds up from the daily rows; a rendered answer only
-- when the log names nothing in its period and no product's attributes. So every answer
-- equals a GROUP BY over the daily rows at the read's snapshot, refreshed or not.
--
-- A NaN amount (numeric allows it) is not costed: it counts as null in every sum, so the
-- answer stays renderable, and correcting the row restores exact sums with no rebuild.
--
-- Writes with triggers disabled (session_replication_role = replica) leave no note: after
-- them, `select product_cost_changes_everything();` (or `product-cost-export refresh --rebuild`).
--
-- Every statement below can run again on a database that has this migration: it creates
-- what is missing and leaves the rest. `migrate` does so when one of the three tables was
-- dropped by hand (src/db/migrations.ts), and the note of everything at the end makes the
-- next refresh rebuild whatever was lost.

-- "if exists": a database migrated from scratch never ran 0003 and 0004 (the runner records
-- them without running them when 0005 comes in the same run; src/db/migrations.ts).
drop trigger if exists product_period_costs_on_insert on product_daily_costs;
drop trigger if exists product_period_costs_on_update on product_daily_costs;
drop trigger if exists product_period_costs_on_delete on product_daily_costs;
drop trigger if exists product_period_costs_on_truncate on product_daily_costs;
drop trigger if exists product_period_costs_on_product_update on products;
drop function if exists product_period_costs_sync();
drop function if exists product_period_costs_truncate();
drop function if exists product_period_costs_copy_products();
drop function if exists product_period_costs_rebuild();
drop table if exists product_period_costs;
-- The running sum of the reads (0003 made it; kept, created here when 0003 never ran).
create or replace aggregate cost_total(numeric) (sfunc = numeric_add, stype = numeric, initcond = '0');

create table if not exists product_cost_changes (
  product_id bigint, -- null: every product
  month      date    -- first day of a month whose sums changed; null: the attributes (or, with no product, everything)
);

create table if not exists product_month_costs (
  month                                date    not null, -- first day of the month
  product_id                           bigint  not null,
  rows_to_date                         bigint  not null, -- daily rows from the product's first month through this one
  purchase_cost_usd_to_date            numeric not null, -- their sum (NaN and null count as nothing)
  purchase_cost_usd_count_to_date      bigint  not null, -- how many values the sum holds
  inbound_freight_usd_to_date          numeric not null,
  inbound_freight_usd_count_to_date    bigint  not null,
  shipping_to_customer_usd_to_date     numeric not null,
  shipping_to_customer_usd_count_to_date bigint not null,
  warehouse_fees_usd_to_date           numeric not null,
  warehouse_fees_usd_count_to_date     bigint  not null,
  -- A read takes one month for every product: one range of this key, in product order.
  primary key (month, product_id)
);

create table if not exists product_cost_answers (
  period       text    not null check (period in ('month', 'quarter', 'year')),
  period_start date    not null,
  segment      text    not null check (segment in ('normal', 'sample', 'all')),
  chunk        integer not null, -- 0, 1, ...: the answer is '[' || chunks in order || ']'
  rows         integer not null, -- rows in this chunk
  body         text    not null, -- row objects separated by commas; every chunk but the first starts with one
  primary key (period, period_start, segment, chunk)
);
-- lz4 where this PostgreSQL has it: a month's 10 MB answer reads back in 27 ms instead of 37.
do $$
begin
  alter table product_cost_answers alter column body set compression lz4;
exception when feature_not_supported then
  null; -- built without lz4: the default, pglz
end
$$;

create or replace function product_cost_changes_of_insert() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  insert into product_cost_changes (product_id, month)
  select product_id, date_trunc('month', cost_date::timestamp)::date from new_rows group by 1, 2;
  return null;
end
$fn$;

create or replace function product_cost_changes_of_update() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- Only rows that really changed: an upsert that rewrites the same values notes nothing.
  insert into product_cost_changes (product_id, month)
  select product_id, date_trunc('month', cost_date::timestamp)::date
  from ((select * from new_rows except select * from old_rows) union all (select * from old_rows except select * from new_rows)) changed
  group by 1, 2;
  return null;
end
$fn$;

create or replace function product_cost_changes_of_delete() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  insert into product_cost_changes (product_id, month)
  select product_id, date_trunc('month', cost_date::timestamp)::date from old_rows group by 1, 2;
  return null;
end
$fn$;

create or replace function product_cost_changes_everything() returns void
  language sql security definer set search_path from current
as $fn$
  insert into product_cost_changes (product_id, month) values (null, null);
$fn$;

create or replace function product_cost_changes_of_truncate() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  perform product_cost_changes_everything();
  return null;
end
$fn$;

create or replace function product_cost_changes_of_products() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- Products whose attributes changed: the rendered answers that show them are stale. The
  -- sums are not (reads join products as they are), and an upsert that changes nothing notes nothing.
  insert into product_cost_changes (product_id, month)
  select product_id, null
  from (select product_id, erp_product_id, erp_sku, product_name, is_sample from new_rows
        except
        select product_id, erp_product_id, erp_sku, product_name, is_sample from old_rows) changed;
  return null;
end
$fn$;

-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
create or replace trigger product_cost_changes_on_insert
  after insert on product_daily_costs
  referencing new table as new_rows
  for each statement execute function product_cost_changes_of_insert();

create or replace trigger product_cost_changes_on_update
  after update on product_daily_costs
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_cost_changes_of_update();

create or replace trigger product_cost_changes_on_delete
  after delete on product_daily_costs
  referencing old table as old_rows
  for each statement execute function product_cost_changes_of_delete();

create or replace trigger product_cost_changes_on_truncate
  after truncate on product_daily_costs
  for each statement execute function product_cost_changes_of_truncate();

create or replace trigger product_cost_changes_on_product_update
  after update on products
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_cost_changes_of_products();

-- Nothing is materialized yet: every read adds up the daily rows (exact, slower) until the
-- first refresh, which migrate runs right after this migration commits.
select product_cost_changes_everything();
