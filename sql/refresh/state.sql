-- What a refresh has to do, read at its snapshot (the first statement of its REPEATABLE READ
-- transaction, so every later statement sees the same data):
--   everything           the log asks for a rebuild (a TRUNCATE, migration 0006, an operator);
--   attributes           a product's attributes changed: every rendered answer is redone;
--   notes                rows in product_cost_deltas;
--   first_month          the month of the earliest daily row (null: no daily rows);
--   last_month           the month of the latest daily row (null: no daily rows);
--   months_last_month    the last month in product_cost_months (null: none yet).
select
  exists (select 1 from product_cost_deltas where product_id is null)                    as everything,
  exists (select 1 from product_cost_deltas where product_id is not null and month is null) as attributes,
  (select count(*) from product_cost_deltas)::int                                        as notes,
  (select date_trunc('month', min(cost_date)::timestamp)::date from product_daily_costs)::text as first_month,
  (select date_trunc('month', max(cost_date)::timestamp)::date from product_daily_costs)::text as last_month,
  (select max(month) from product_cost_months)::text                                     as months_last_month
