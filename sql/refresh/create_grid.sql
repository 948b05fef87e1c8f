-- Every (product, month) whose totals to date the changes touch: for each product the log
-- names, every month from its first changed one through $1 (a change to a month moves the
-- totals of every later month). A scratch table of the refresh's transaction, analyzed
-- before use, like refresh_changed.
--   $1 the last month of the totals (date)
create temporary table refresh_grid on commit drop as
select f.product_id, g.month::date as month
from (select product_id, min(month) as first_month from refresh_changed group by 1) f,
     generate_series(f.first_month, $1::date, interval '1 month') as g(month)
