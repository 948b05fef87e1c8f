-- A step forgets the notes of months outside the window (migration 0013): their rows are read
-- as they are. The nearest such months on either side where a note added a row (a day whose
-- running count of rows went up; a note that only removes rows leaves nothing unfolded) are
-- kept, in the step's commit, so that the refresh never widens the window over rows no note
-- names any more (months-window.ts).
--   $1 the window's first month   $2 its last month (dates)
with added as (
  select n.month
  from refresh_notes n
  where n.month between '0001-01-01' and '9999-12-01' and (n.month < $1::date or n.month > $2::date)
    and exists (select from generate_subscripts(n.rows, 1) i where n.rows[i] > coalesce(n.rows[i - 1], 0))
)
update product_cost_refreshes set
  outside_before = greatest(outside_before, (select max(month) from added where month < $1::date)),
  outside_after = least(outside_after, (select min(month) from added where month > $2::date))
