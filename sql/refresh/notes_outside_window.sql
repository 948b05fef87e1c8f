-- The months the waiting notes name outside the rollup's window (dates a request can name,
-- 0001-01-01 to 9999-12-31): the window widens to them, or a rebuild finds it again
-- (src/db/months-window.ts).
--   $1, $2 the window's first and last month
select distinct month::text as month
from product_cost_deltas
where month between '0001-01-01' and '9999-12-01' and (month < $1::date or month > $2::date)
order by 1
