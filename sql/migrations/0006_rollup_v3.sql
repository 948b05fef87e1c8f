-- Rollup v3: any range [from, to] is two rows per product, whatever its length and wherever
-- its edges fall; changes the refresh has not folded in yet are read as deltas, not by
-- adding up daily rows again.
--
-- Rollup v2 (0005) kept totals per calendar month: a run of whole months was two rows per
-- product, but the days at either end of any other range (last 7 or 30 days, month to
-- date, year to date) were added up from the daily rows, and so was every (product, month)
-- the log named until the next refresh: the ranges dashboards ask read slower than the naive
-- GROUP BY. In place of its log and totals:
--
--   product_cost_months    per product and calendar month, dense from the product's first
--                          month to the last month of the data:
--                            the product's totals before the month (daily rows; per amount
--                            the sum of its values and how many there were), and
--                            within the month, bitmasks of the days (bit d-1 for day d) with
--                            a daily row and with a value of each amount, and per amount the
--                            running sum at each day with a row, in day order.
--                          The totals through any day d are then one row: the totals before
--                          its month, plus the running sum at the k-th day with a row, where
--                          k is the number of bits of `days` up to d (a popcount); each
--                          count is the popcount of its mask up to d. A range is the
--                          difference of the totals through its last day and through the
--                          day before its first: two rows, one when both are in one month.
--   product_cost_deltas    what writers changed since the last refresh, at the same grain:
--                          one row per statement and (product, month) it changed, with the
--                          days it changed and the running change at each of them, in the
--                          number of daily rows, each amount's sum and each amount's count
--                          (new minus old; an UPDATE that changes nothing notes nothing).
--                          A read adds the change through its last day less the change
--                          through the day before its first: one row per note, never the
--                          daily rows again. Also (product, null): the product's attributes
--                          changed (rendered answers that show it are stale); (null, null):
--                          everything (a TRUNCATE, this migration, an operator), until which
--                          reads add up the daily rows.
--   product_cost_answers   (kept from 0005) the JSON answer of calendar months, quarters and
--                          years, rendered by the refresh; trusted only while no note names
--                          a month of the period, a product's attributes, or everything.
--   product_cost_refreshes one row: when the last refresh ended and what it folded, for the
--                          lag the service reports (/metrics, /readyz).
--
-- Writers only append notes: statement-level triggers with transition tables, one
-- INSERT .. SELECT per statement, into a table with no key and no index, so writers never
-- wait on each other or on a refresh, at any isolation level, and no write the contract
-- tables accept is refused. Only the refresh (product-cost-export refresh, migrate, or the
-- service itself when given an owner's URL) writes the other tables, from the daily rows,
-- in one REPEATABLE READ transaction that deletes exactly the notes its snapshot saw.
-- A read is one statement, one snapshot: the months as the refresh left them plus the
-- notes committed since, so every answer equals a GROUP BY over the daily rows at its
-- snapshot, refreshed or not.
--
-- A NaN amount (numeric allows it) is not costed: it counts as null in every sum and count.
--
-- Writes with triggers disabled (session_replication_role = replica) leave no note: after
-- them, `select product_cost_changes_everything();` (or `product-cost-export refresh --rebuild`).
--
-- Every statement below can run again on a database that has this migration: it creates
-- what is missing and leaves the rest (`migrate` does so when a table was dropped by hand,
-- src/db/migrations.ts), and the note of everything at the end makes the next refresh
-- rebuild whatever was lost.

-- v1's and v2's triggers and tables ("if exists": a database migrated from scratch ran
-- neither; one at 0004 skips 0005, which 0006 supersedes, so v1's objects go here).
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
drop trigger if exists product_cost_changes_on_insert on product_daily_costs;
drop trigger if exists product_cost_changes_on_update on product_daily_costs;
drop trigger if exists product_cost_changes_on_delete on product_daily_costs;
drop trigger if exists product_cost_changes_on_truncate on product_daily_costs;
drop trigger if exists product_cost_changes_on_product_update on products;
drop function if exists product_cost_changes_of_insert();
drop function if exists product_cost_changes_of_update();
drop function if exists product_cost_changes_of_delete();
drop function if exists product_cost_changes_of_truncate();
drop function if exists product_cost_changes_of_products();
drop function if exists product_cost_changes_everything();
drop table if exists product_cost_changes;
drop table if exists product_month_costs;
-- v2's running sum of its reads (0003 made it).
drop aggregate if exists cost_total(numeric);

create table if not exists product_cost_months (
  month                                date      not null, -- first day of the month
  product_id                           bigint    not null,
  -- The product's totals before this month:
  rows_before                          integer   not null, -- daily rows
  purchase_cost_usd_before             numeric   not null, -- the sum of the values (NaN and null count as nothing)
  purchase_cost_usd_count_before       integer   not null, -- how many values the sum holds
  inbound_freight_usd_before           numeric   not null,
  inbound_freight_usd_count_before     integer   not null,
  shipping_to_customer_usd_before      numeric   not null,
  shipping_to_customer_usd_count_before integer  not null,
  warehouse_fees_usd_before            numeric   not null,
  warehouse_fees_usd_count_before      integer   not null,
  -- Within this month (bit d-1 stands for day d):
  days                                 integer   not null, -- the days with a daily row
  purchase_cost_usd_days               integer   not null, -- the days with a purchase cost
  inbound_freight_usd_days             integer   not null,
  shipping_to_customer_usd_days        integer   not null,
  warehouse_fees_usd_days              integer   not null,
  purchase_cost_usd                    numeric[] not null, -- the running sum at each day of `days`, in order
  inbound_freight_usd                  numeric[] not null,
  shipping_to_customer_usd             numeric[] not null,
  warehouse_fees_usd                   numeric[] not null,
  -- A read takes one month for every product: one range of this key.
  primary key (month, product_id)
);

create table if not exists product_cost_deltas (
  product_id                bigint,    -- null: every product
  month                     date,      -- first day of the month changed; null: the attributes (or, with no product, everything)
  days                      integer,   -- the days of the month the change touches (bit d-1 for day d)
  rows                      integer[], -- the running change at each of those days, in order: in the number of daily rows,
  purchase_cost_usd         numeric[], -- in each amount's sum,
  purchase_cost_usd_count   integer[], -- and in how many values it holds
  inbound_freight_usd       numeric[],
  inbound_freight_usd_count integer[],
  shipping_to_customer_usd  numeric[],
  shipping_to_customer_usd_count integer[],
  warehouse_fees_usd        numeric[],
  warehouse_fees_usd_count  integer[]
);

create table if not exists product_cost_refreshes (
  singleton   boolean     primary key default true check (singleton),
  finished_at timestamptz not null, -- when the last refresh committed what it folded
  notes       integer     not null, -- how many notes it folded
  ms          integer     not null  -- how long it took
);

-- The answers of calendar periods, as 0005 made them (a database migrated from scratch
-- never ran it).
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

-- Whoever may read the daily rows may read what the refresh keeps from them: the serving
-- role of sql/roles/read-only-role.sql keeps its access across this upgrade (and when a
-- table is made again), with no new GRANT to run.
do $grants$
declare
  reader text;
begin
  for reader in
    select distinct pg_get_userbyid(a.grantee)
    from pg_class c cross join aclexplode(c.relacl) as a
    where c.oid = 'product_daily_costs'::regclass and a.privilege_type = 'SELECT'
      and a.grantee <> 0 and a.grantee <> c.relowner -- not PUBLIC, not the owner
  loop
    execute format('grant select on product_cost_months, product_cost_deltas, product_cost_refreshes, product_cost_answers to %I', reader);
  end loop;
end
$grants$;

-- Notes the changes of one statement: the rows it added and removed (an UPDATE both), netted
-- per (product, day) so that rewriting the same values notes nothing, then one note per
-- (product, month) with the running change at each day it touched. The primary key allows
-- one row per (product, day) on each side, so netting is a join, not a grouping.
create or replace function product_cost_deltas_note(added product_daily_costs[], removed product_daily_costs[]) returns void
  language plpgsql security definer set search_path from current
as $fn$
begin
  insert into product_cost_deltas (
    product_id, month, days, rows,
    purchase_cost_usd, purchase_cost_usd_count, inbound_freight_usd, inbound_freight_usd_count,
    shipping_to_customer_usd, shipping_to_customer_usd_count, warehouse_fees_usd, warehouse_fees_usd_count)
  with per_day as (
    select
      coalesce(a.product_id, r.product_id) as product_id,
      date_trunc('month', coalesce(a.cost_date, r.cost_date)::timestamp)::date as month,
      extract(day from coalesce(a.cost_date, r.cost_date))::int as day,
      (a.product_id is not null)::int - (r.product_id is not null)::int as n,
      coalesce(nullif(a.purchase_cost_usd, 'NaN'), 0) - coalesce(nullif(r.purchase_cost_usd, 'NaN'), 0) as pc,
      (nullif(a.purchase_cost_usd, 'NaN') is not null)::int - (nullif(r.purchase_cost_usd, 'NaN') is not null)::int as pcn,
      coalesce(nullif(a.inbound_freight_usd, 'NaN'), 0) - coalesce(nullif(r.inbound_freight_usd, 'NaN'), 0) as fr,
      (nullif(a.inbound_freight_usd, 'NaN') is not null)::int - (nullif(r.inbound_freight_usd, 'NaN') is not null)::int as frn,
      coalesce(nullif(a.shipping_to_customer_usd, 'NaN'), 0) - coalesce(nullif(r.shipping_to_customer_usd, 'NaN'), 0) as sh,
      (nullif(a.shipping_to_customer_usd, 'NaN') is not null)::int - (nullif(r.shipping_to_customer_usd, 'NaN') is not null)::int as shn,
      coalesce(nullif(a.warehouse_fees_usd, 'NaN'), 0) - coalesce(nullif(r.warehouse_fees_usd, 'NaN'), 0) as wf,
      (nullif(a.warehouse_fees_usd, 'NaN') is not null)::int - (nullif(r.warehouse_fees_usd, 'NaN') is not null)::int as wfn
    from unnest(added) as a
    full join unnest(removed) as r on r.product_id = a.product_id and r.cost_date = a.cost_date
  ),
  running as (
    select product_id, month, day,
      sum(n) over w as n,
      sum(pc) over w as pc, sum(pcn) over w as pcn, sum(fr) over w as fr, sum(frn) over w as frn,
      sum(sh) over w as sh, sum(shn) over w as shn, sum(wf) over w as wf, sum(wfn) over w as wfn
    from per_day
    where n <> 0 or pc <> 0 or pcn <> 0 or fr <> 0 or frn <> 0 or sh <> 0 or shn <> 0 or wf <> 0 or wfn <> 0
    window w as (partition by product_id, month order by day rows unbounded preceding)
  )
  -- In day order: the order `running` comes in, the window's (an ORDER BY per aggregate
  -- would sort each group again: half the trigger's time).
  select product_id, month, bit_or(1 << (day - 1)), array_agg(n::int),
    array_agg(pc), array_agg(pcn::int), array_agg(fr), array_agg(frn::int),
    array_agg(sh), array_agg(shn::int), array_agg(wf), array_agg(wfn::int)
  from running
  group by product_id, month;
end
$fn$;

create or replace function product_cost_deltas_of_insert() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- An upsert fires this trigger and the UPDATE one, one of them with no rows: nothing to note.
  if exists (select from new_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), '{}');
  end if;
  return null;
end
$fn$;

create or replace function product_cost_deltas_of_update() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  if exists (select from old_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$fn$;

create or replace function product_cost_deltas_of_delete() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  if exists (select from old_rows) then
    perform product_cost_deltas_note('{}', array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$fn$;

create or replace function product_cost_changes_everything() returns void
  language sql security definer set search_path from current
as $fn$
  insert into product_cost_deltas (product_id, month) values (null, null);
$fn$;

create or replace function product_cost_deltas_of_truncate() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  perform product_cost_changes_everything();
  return null;
end
$fn$;

create or replace function product_cost_deltas_of_products() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- Products whose attributes changed: the rendered answers that show them are stale. The
  -- sums are not (reads join products as they are), and an upsert that changes nothing notes nothing.
  insert into product_cost_deltas (product_id, month)
  select product_id, null
  from (select product_id, erp_product_id, erp_sku, product_name, is_sample from new_rows
        except
        select product_id, erp_product_id, erp_sku, product_name, is_sample from old_rows) changed;
  return null;
end
$fn$;

-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
create or replace trigger product_cost_deltas_on_insert
  after insert on product_daily_costs
  referencing new table as new_rows
  for each statement execute function product_cost_deltas_of_insert();

create or replace trigger product_cost_deltas_on_update
  after update on product_daily_costs
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_cost_deltas_of_update();

create or replace trigger product_cost_deltas_on_delete
  after delete on product_daily_costs
  referencing old table as old_rows
  for each statement execute function product_cost_deltas_of_delete();

create or replace trigger product_cost_deltas_on_truncate
  after truncate on product_daily_costs
  for each statement execute function product_cost_deltas_of_truncate();

create or replace trigger product_cost_deltas_on_product_update
  after update on products
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_cost_deltas_of_products();

-- Nothing is folded yet: every read adds up the daily rows (exact, slower) until the first
-- refresh, which migrate runs right after this migration commits.
select product_cost_changes_everything();
