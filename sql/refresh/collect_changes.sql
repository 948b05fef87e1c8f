-- The (product, month) pairs whose days this refresh computes again from the daily rows, from
-- the first day a note names (first_day), in a scratch table of its transaction (gone at
-- commit), analyzed before use so that the planner knows how many there are: their daily
-- rows looked up by key when they are few, read by date when they are many. The pairs the
-- log names; for a rebuild ($1), every product in every month from $2 through $3, from its
-- first day (a product without rows in a month gets no days there).
create temporary table refresh_changed on commit drop as
select product_id, month,
  -- The earliest day a note of the pair names (its lowest bit): the days before it stand.
  min(bit_count(((days & -days) - 1)::bit(32)))::int + 1 as first_day
from product_cost_deltas
where not $1::boolean and product_id is not null and month is not null
group by product_id, month
union all
select p.product_id, g.month::date, 1
from products p, generate_series($2::date, $3::date, interval '1 month') as g(month)
where $1::boolean
