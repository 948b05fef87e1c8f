-- What a refresh has to do, read at the start of its run:
--   everything           the log asks for a rebuild (a TRUNCATE, migration 0006, an operator);
--   notes                rows in product_cost_deltas;
--   first_month          the month of the earliest daily row (null: no daily rows);
--   last_month           the month of the latest daily row (null: no daily rows);
--   months_last_month    the last month in product_cost_months (null: none yet);
--   notes_last_month     the latest month a note names (null: none);
--   notes_first_month    the earliest (null: none);
--   first_product, last_product  the lowest and highest product a note of a month names.
with named as (
  select min(month) as first_month, max(month) as last_month, min(product_id) as first_product, max(product_id) as last_product
  from product_cost_deltas where month is not null
)
select
  exists (select 1 from product_cost_deltas where product_id is null)                    as everything,
  (select count(*) from product_cost_deltas)::int                                        as notes,
  (select date_trunc('month', min(cost_date)::timestamp)::date from product_daily_costs)::text as first_month,
  (select date_trunc('month', max(cost_date)::timestamp)::date from product_daily_costs)::text as last_month,
  (select max(month) from product_cost_months)::text                                     as months_last_month,
  (select last_month from named)::text                                                   as notes_last_month,
  (select first_month from named)::text                                                  as notes_first_month,
  (select first_product from named)::text                                                as first_product,
  (select last_product from named)::text                                                 as last_product
