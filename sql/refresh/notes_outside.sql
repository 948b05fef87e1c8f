-- A rebuild's first transaction forgets the notes of months outside the window it has just
-- found (migration 0013), counting them as folded (count_folded.sql, forget_changes.sql): the
-- window was found from the data at this snapshot, and its nearest months outside it with it,
-- so these notes' rows are accounted for. The notes its steps forget later are those written
-- since, and each marks its month (outside_notes.sql) as one whose rows no note names.
--   $1 the window's first month   $2 its last month (dates; null: no window, every note of a month)
create temporary table refresh_notes on commit drop as
select ctid as row_id, product_id, month, days, rows, noted_at
from product_cost_deltas
where month is not null and ($1::date is null or month < $1::date or month > $2::date)
