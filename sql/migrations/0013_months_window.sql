-- The rollup keeps the months of a window of the data, not every month from a product's first
-- row to the data's last (issue 43). The months were dense over the span of the data's dates,
-- so one row dated 2099-12-31 among 50 products made 43,950 month rows and a 54 s refresh, one
-- dated 2999-12-31 a refresh that ran out of shared memory on every try, and `infinity` one that
-- failed for good. Now the refresh finds a window of months from the data (sql/refresh/window.sql:
-- the run of dates with no gap over a year that holds the most days) and keeps months for it
-- only; a row outside it is read as it is by each read that reaches it (its cost follows its
-- rows, as the naive GROUP BY's), and costs the refresh nothing.
--   window_first, window_last  the window's first and last month (null: no months yet)
--   outside_before, outside_after  the nearest month with rows outside the window on either
--     side, as far as the refresh knows (null: none): a window widened by notes over such a
--     month would take in rows no note names, so the refresh rebuilds instead.
alter table product_cost_refreshes
  add column if not exists window_first date,
  add column if not exists window_last date,
  add column if not exists outside_before date,
  add column if not exists outside_after date;

-- The months as they are were made without a window: `migrate`'s refresh rebuilds them
-- (reads add up the daily rows until it has).
insert into product_cost_deltas (product_id, month) values (null, null);
