-- What a refresh has to do, read at the start of its run, under its lock (the plan is
-- src/rollup/refresh-plan.ts, from this row alone):
--   everything           the log asks for a rebuild (a TRUNCATE, a migration, an operator);
--   notes                rows in product_cost_deltas;
--   window_first, window_last  the months the rollup keeps (migration 0013; null: none yet);
--   outside_before, outside_after  the nearest months with rows outside them (null: none known);
--   months_last_month    the last month in product_cost_months (null: none yet);
--   notes_first_month, notes_last_month  the earliest and latest month a note names, of the
--                        dates a request can name (0001-01-01 to 9999-12-31; null: none);
--   first_product, last_product  the lowest and highest product a note of a month names;
--   named_outside        the months notes name outside the window, of those dates, ascending:
--                        the window widens to them, or a rebuild finds it again (months-window.ts).
with named as (
  select min(month) as first_month, max(month) as last_month, min(product_id) as first_product, max(product_id) as last_product
  from product_cost_deltas where month is not null
),
dates as (
  select min(month) as first_month, max(month) as last_month
  from product_cost_deltas where month between '0001-01-01' and '9999-12-01'
),
record as (
  select window_first, window_last, outside_before, outside_after from product_cost_refreshes
)
select
  exists (select 1 from product_cost_deltas where product_id is null)                    as everything,
  (select count(*) from product_cost_deltas)::int                                        as notes,
  (select window_first from record)::text                                                as window_first,
  (select window_last from record)::text                                                 as window_last,
  (select outside_before from record)::text                                              as outside_before,
  (select outside_after from record)::text                                               as outside_after,
  (select max(month) from product_cost_months)::text                                     as months_last_month,
  (select first_month from dates)::text                                                  as notes_first_month,
  (select last_month from dates)::text                                                   as notes_last_month,
  (select first_product from named)::text                                                as first_product,
  (select last_product from named)::text                                                 as last_product,
  array(
    select distinct d.month::text
    from product_cost_deltas d, record r
    where d.month between '0001-01-01' and '9999-12-01' and (d.month < r.window_first or d.month > r.window_last)
    order by 1
  )                                                                                      as named_outside
