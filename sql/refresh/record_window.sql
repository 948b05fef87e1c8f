-- The window of months the rollup keeps (migration 0013) and the nearest months outside it
-- with rows (null: none), in the transaction that makes the months match it (a rebuild's
-- first, or the step that widens it): reads take it at their snapshot.
--   $1 first month   $2 last month   $3 outside before   $4 outside after (dates)
update product_cost_refreshes set window_first = $1::date, window_last = $2::date, outside_before = $3::date, outside_after = $4::date
