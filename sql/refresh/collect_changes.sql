-- The (product, month) pairs one step of the refresh computes again from the daily rows, from
-- the first day a note names (first_day), in a scratch table of its transaction (gone at
-- commit): the pairs its notes name (step_notes.sql).
create temporary table refresh_changed on commit drop as
select product_id, month,
  -- The earliest day a note of the pair names (its lowest bit): the days before it stand.
  min(bit_count(((days & -days) - 1)::bit(32)))::int + 1 as first_day
from refresh_notes
where month is not null
group by product_id, month
