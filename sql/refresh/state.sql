-- What a refresh has to do, read at the start of its run:
--   everything           the log asks for a rebuild (a TRUNCATE, a migration, an operator);
--   notes                rows in product_cost_deltas;
--   window_first, window_last  the months the rollup keeps (migration 0013; null: none yet);
--   outside_before, outside_after  the nearest months with rows outside them (null: none known);
--   windowed             the database has 0013's window (else the window is the data's span);
--   data_first_month, data_last_month  that span (index probes);
--   months_last_month    the last month in product_cost_months (null: none yet);
--   notes_last_month     the latest month a note names, of the dates a request can name (null: none);
--   notes_first_month    the earliest (null: none);
--   first_product, last_product  the lowest and highest product a note of a month names.
with named as (
  select min(month) as first_month, max(month) as last_month, min(product_id) as first_product, max(product_id) as last_product
  from product_cost_deltas where month is not null
),
dates as (
  select min(month) as first_month, max(month) as last_month
  from product_cost_deltas where month between '0001-01-01' and '9999-12-01'
),
record as (
  -- Read through jsonb: a database before migration 0013 has no such columns (a refresh may run
  -- before `migrate`), and its window is then the span of the data (refresh.ts).
  select (to_jsonb(r) ->> 'window_first')::date as window_first, (to_jsonb(r) ->> 'window_last')::date as window_last,
    (to_jsonb(r) ->> 'outside_before')::date as outside_before, (to_jsonb(r) ->> 'outside_after')::date as outside_after,
    to_jsonb(r) ? 'window_first' as windowed
  from product_cost_refreshes r
)
select
  exists (select 1 from product_cost_deltas where product_id is null)                    as everything,
  (select count(*) from product_cost_deltas)::int                                        as notes,
  (select window_first from record)::text                                                as window_first,
  (select window_last from record)::text                                                 as window_last,
  (select outside_before from record)::text                                              as outside_before,
  (select outside_after from record)::text                                               as outside_after,
  coalesce((select windowed from record),
    exists (select from pg_attribute where attrelid = 'product_cost_refreshes'::regclass and attname = 'window_first' and not attisdropped)) as windowed,
  -- The data's span, for a database before 0013 (dates a request can name; index probes).
  (select date_trunc('month', min(cost_date)::timestamp)::date from product_daily_costs where cost_date >= '0001-01-01')::text as data_first_month,
  (select date_trunc('month', max(cost_date)::timestamp)::date from product_daily_costs where cost_date <= '9999-12-31')::text as data_last_month,
  (select max(month) from product_cost_months)::text                                     as months_last_month,
  (select last_month from dates)::text                                                   as notes_last_month,
  (select first_month from dates)::text                                                  as notes_first_month,
  (select first_product from named)::text                                                as first_product,
  (select last_product from named)::text                                                 as last_product
