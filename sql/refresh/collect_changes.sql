-- The (product, month) pairs one step of the refresh computes again from the daily rows, from
-- the first day a note names (first_day), in a scratch table of its transaction (gone at
-- commit): the pairs its notes name (step_notes.sql) in the window of months ($1 through $2,
-- migration 0013); a note outside it is only forgotten.
--   $1 the window's first month (date)   $2 its last month (date)
create temporary table refresh_changed on commit drop as
select product_id, month,
  -- The earliest day a note of the pair names (its lowest bit): the days before it stand.
  min(bit_count(((days & -days) - 1)::bit(32)))::int + 1 as first_day
from refresh_notes
where month between $1::date and $2::date
group by product_id, month
