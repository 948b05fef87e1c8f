-- A rollup of product_daily_costs per calendar month, quarter and year, kept current by
-- triggers, so that a read costs products × periods touched instead of daily rows: a
-- month, a quarter or a year is one row per product, two years about seven.
--
-- product_period_costs holds, per product and period that has daily rows:
--   period, period_start   'month', 'quarter' or 'year' (the date_trunc field) and its first day;
--   row_count              how many daily rows (a product with a row here has a row in the period);
--   <amount>_sum           the sum of the column's non-null values (0 when there are none);
--   <amount>_count         how many of those values are non-null.
-- So a range's SUM(column) is exactly: null when the counts add up to 0, else the sums
-- added up. Sums are unconstrained numeric: exact, never rounded, never overflowing.
--
-- Triggers (statement level, with transition tables, so a bulk INSERT or COPY of
-- millions of rows updates the rollup in one grouped statement, not row by row):
--   INSERT / UPDATE / DELETE  add the new rows and subtract the old ones per (period,
--                             product), with INSERT .. ON CONFLICT DO UPDATE: additive, so
--                             concurrent writers never lose each other's changes (the
--                             conflicting row is locked and re-read). A period that drops to
--                             0 rows is deleted. Keys are upserted in key order, so writers
--                             lock them in the same order.
--   TRUNCATE                  empties the rollup (an ETL reload: TRUNCATE, then COPY).
-- Concurrent writers to the same product and period wait for each other's commit (the
-- rollup row is locked until then); two transactions of several statements each can
-- deadlock on them, and PostgreSQL then aborts one (40P01), which its client retries.
-- The functions run as their owner (security definer), so an ETL role that may write the
-- base tables needs no rights on the rollup.
--
-- product_period_costs_rebuild() recomputes the rollup from the daily rows. This migration
-- uses it to build the rollup of an existing database; an operator may call it after
-- writing product_daily_costs with triggers disabled (session_replication_role = replica,
-- ALTER TABLE .. DISABLE TRIGGER), which bypasses the rollup.

create table product_period_costs (
  period                         text    not null check (period in ('month', 'quarter', 'year')),
  period_start                   date    not null,
  product_id                     bigint  not null,
  row_count                      integer not null,
  purchase_cost_usd_sum          numeric not null,
  purchase_cost_usd_count        integer not null,
  inbound_freight_usd_sum        numeric not null,
  inbound_freight_usd_count      integer not null,
  shipping_to_customer_usd_sum   numeric not null,
  shipping_to_customer_usd_count integer not null,
  warehouse_fees_usd_sum         numeric not null,
  warehouse_fees_usd_count       integer not null,
  -- Reads select a range of periods for every product; one period comes out in product order.
  primary key (period, period_start, product_id)
);

-- sum(numeric) keeps a large state per group (about 400 bytes per column, 85 MB for 50,000
-- products × 4 columns); the read query adds up only a few rollup rows per product, where
-- one running numeric is enough: a quarter of the memory (no spill to disk at a small
-- work_mem) and faster. Exact like sum(); 0, not null, when every input is null (the
-- counts decide null).
create aggregate cost_total(numeric) (sfunc = numeric_add, stype = numeric, initcond = '0');

create function product_period_costs_sync() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
-- The same statement three times, once per event, over the transition tables that event
-- has: static SQL, so PL/pgSQL plans it once per session. (One dynamic statement would
-- read better, but planning it on every call made a one-row INSERT cost 0.8 ms instead
-- of 0.13 ms.) The rows the statement changed count +1 (added) and -1 (removed).
declare
  emptied_periods text[];
  emptied_starts date[];
  emptied_products bigint[];
begin
  if tg_op = 'INSERT' then
    -- Only additions: no period can drop to 0 rows.
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select 1 as sign, * from new_rows) c
      group by 1, 2
    ),
    delta as (
      -- Each month's change, added to its month, its quarter and its year.
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    )
    insert into product_period_costs as r
    select * from delta
    -- An UPDATE that rewrote equal values changes nothing: skip it (no row lock taken).
    where row_count <> 0
       or purchase_cost_usd_sum <> 0 or purchase_cost_usd_count <> 0
       or inbound_freight_usd_sum <> 0 or inbound_freight_usd_count <> 0
       or shipping_to_customer_usd_sum <> 0 or shipping_to_customer_usd_count <> 0
       or warehouse_fees_usd_sum <> 0 or warehouse_fees_usd_count <> 0
    order by period, period_start, product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count;
    return null;
  elsif tg_op = 'UPDATE' then
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select 1 as sign, * from new_rows union all select -1, * from old_rows) c
      group by 1, 2
    ),
    delta as (
      -- Each month's change, added to its month, its quarter and its year.
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    ),
    upserted as (
    insert into product_period_costs as r
    select * from delta
    -- An UPDATE that rewrote equal values changes nothing: skip it (no row lock taken).
    where row_count <> 0
       or purchase_cost_usd_sum <> 0 or purchase_cost_usd_count <> 0
       or inbound_freight_usd_sum <> 0 or inbound_freight_usd_count <> 0
       or shipping_to_customer_usd_sum <> 0 or shipping_to_customer_usd_count <> 0
       or warehouse_fees_usd_sum <> 0 or warehouse_fees_usd_count <> 0
    order by period, period_start, product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count
    returning r.period, r.period_start, r.product_id, r.row_count
    )
    select array_agg(period), array_agg(period_start), array_agg(product_id) from upserted where row_count = 0
    into emptied_periods, emptied_starts, emptied_products;
  else
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select -1 as sign, * from old_rows) c
      group by 1, 2
    ),
    delta as (
      -- Each month's change, added to its month, its quarter and its year.
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    ),
    upserted as (
    insert into product_period_costs as r
    select * from delta
    -- An UPDATE that rewrote equal values changes nothing: skip it (no row lock taken).
    where row_count <> 0
       or purchase_cost_usd_sum <> 0 or purchase_cost_usd_count <> 0
       or inbound_freight_usd_sum <> 0 or inbound_freight_usd_count <> 0
       or shipping_to_customer_usd_sum <> 0 or shipping_to_customer_usd_count <> 0
       or warehouse_fees_usd_sum <> 0 or warehouse_fees_usd_count <> 0
    order by period, period_start, product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count
    returning r.period, r.period_start, r.product_id, r.row_count
    )
    select array_agg(period), array_agg(period_start), array_agg(product_id) from upserted where row_count = 0
    into emptied_periods, emptied_starts, emptied_products;
  end if;

  -- A separate statement: within the one above, the upserted row versions are not visible.
  if emptied_periods is not null then
    delete from product_period_costs r
    using unnest(emptied_periods, emptied_starts, emptied_products) as e(period, period_start, product_id)
    where (r.period, r.period_start, r.product_id) = (e.period, e.period_start, e.product_id) and r.row_count = 0;
  end if;
  return null;
end
$fn$;

create function product_period_costs_truncate() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  truncate product_period_costs;
  return null;
end
$fn$;

create function product_period_costs_rebuild() returns void
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- Writers wait until the rebuild commits; readers go on (and see the old rollup until then).
  lock table product_daily_costs in share row exclusive mode;
  truncate product_period_costs;
  insert into product_period_costs
  select
    'month', date_trunc('month', d.cost_date::timestamp)::date, d.product_id,
    count(*),
    coalesce(sum(d.purchase_cost_usd), 0),        count(d.purchase_cost_usd),
    coalesce(sum(d.inbound_freight_usd), 0),      count(d.inbound_freight_usd),
    coalesce(sum(d.shipping_to_customer_usd), 0), count(d.shipping_to_customer_usd),
    coalesce(sum(d.warehouse_fees_usd), 0),       count(d.warehouse_fees_usd)
  from product_daily_costs d
  group by 2, 3
  order by 2, 3;
  -- Quarters and years from the months, not from the daily rows again.
  insert into product_period_costs
  select
    l.period, date_trunc(l.period, m.period_start::timestamp)::date, m.product_id,
    sum(m.row_count),
    sum(m.purchase_cost_usd_sum),        sum(m.purchase_cost_usd_count),
    sum(m.inbound_freight_usd_sum),      sum(m.inbound_freight_usd_count),
    sum(m.shipping_to_customer_usd_sum), sum(m.shipping_to_customer_usd_count),
    sum(m.warehouse_fees_usd_sum),       sum(m.warehouse_fees_usd_count)
  from product_period_costs m cross join (values ('quarter'), ('year')) as l(period)
  where m.period = 'month'
  group by 1, 2, 3
  order by 1, 2, 3;
  analyze product_period_costs;
end
$fn$;

-- One trigger per event: PostgreSQL allows transition tables only on single-event triggers.
create trigger product_period_costs_on_insert
  after insert on product_daily_costs
  referencing new table as new_rows
  for each statement execute function product_period_costs_sync();

create trigger product_period_costs_on_update
  after update on product_daily_costs
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_period_costs_sync();

create trigger product_period_costs_on_delete
  after delete on product_daily_costs
  referencing old table as old_rows
  for each statement execute function product_period_costs_sync();

create trigger product_period_costs_on_truncate
  after truncate on product_daily_costs
  for each statement execute function product_period_costs_truncate();

-- Build the rollup from the rows already there (a database the ETL filled before this
-- migration). The triggers exist first and the lock is held to commit: no write is missed.
select product_period_costs_rebuild();
