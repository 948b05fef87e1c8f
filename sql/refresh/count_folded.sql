-- Keeps count of the notes a step folds in (step_notes.sql, which forget_changes.sql then
-- deletes), for the answer versions (migration 0007): per day a note touches, for attribute
-- notes, and for everything notes. In the step's transaction: the counts move from the log to
-- product_cost_folded_changes at one commit.
-- A rebuild's own note of everything (days = -1, migration 0013) names no change: not counted.
with notes as (
  select product_id is null as everything, month, days, count(*) as notes, max(noted_at) as noted_at
  from refresh_notes
  where not (product_id is null and month is null and days is not distinct from -1)
  group by 1, 2, 3
)
insert into product_cost_folded_changes (day, changes, last_changed_at)
select (n.month + (d - 1))::date, sum(n.notes), max(n.noted_at)
from notes n cross join generate_series(1, 31) as d
where n.month is not null and n.days & (1 << (d - 1)) <> 0
group by 1
union all
select case when n.everything then 'infinity'::date else '-infinity'::date end, sum(n.notes), max(n.noted_at)
from notes n
where n.month is null
group by 1
on conflict (day) do update set
  changes = product_cost_folded_changes.changes + excluded.changes,
  last_changed_at = greatest(product_cost_folded_changes.last_changed_at, excluded.last_changed_at)
