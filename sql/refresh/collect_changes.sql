-- The (product, month) pairs one step of the refresh computes again from the daily rows, from
-- the first day a note names (first_day), in a scratch table of its transaction (gone at
-- commit): the pairs its notes name (step_notes.sql). A rebuild ($1) computes whole months
-- (its months were emptied: nothing to keep), of those pairs and of every month from $4
-- through $5 of every product from $2 through $3 (a product without rows in a month gets no
-- days there; a month a note names outside $4..$5 was written after the rebuild began).
--   $1 rebuild (boolean)   $2 first product id   $3 last product id
--   $4 the data's first month (date; a rebuild only)   $5 the rollup's last month (date)
create temporary table refresh_changed on commit drop as
select product_id, month, min(first_day) as first_day
from (
  select product_id, month,
    -- The earliest day a note of the pair names (its lowest bit): the days before it stand.
    case when $1::boolean then 1 else bit_count(((days & -days) - 1)::bit(32))::int + 1 end as first_day
  from refresh_notes
  union all
  select p.product_id, g.month::date, 1
  from products p, generate_series($4::date, $5::date, interval '1 month') as g(month)
  where $1::boolean and p.product_id between $2::bigint and $3::bigint
) pairs
group by product_id, month
