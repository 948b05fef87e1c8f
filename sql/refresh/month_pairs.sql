-- A month's changed (product, month) pairs of the step (refresh_changed, collect_changes.sql):
-- how many, the earliest day they name, and the days from it to the month's end.
--   $1 the month   $2 the month after it
select count(*)::int as pairs, min(month + first_day - 1)::text as first_day, ($2::date - min(month + first_day - 1))::int as days
from refresh_changed
where month = $1::date
