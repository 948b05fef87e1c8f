-- The refresh's record for the lag the service reports (GET /metrics, /readyz): when it
-- committed and what it folded. In the refresh's transaction: it commits with the fold.
--   $1 notes folded (integer)   $2 milliseconds taken so far (integer)
insert into product_cost_refreshes (finished_at, notes, ms) values (clock_timestamp(), $1::int, $2::int)
on conflict (singleton) do update set finished_at = excluded.finished_at, notes = excluded.notes, ms = excluded.ms
