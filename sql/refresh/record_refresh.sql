-- The refresh's record for the lag the service reports (GET /metrics, /readyz): when it
-- committed its last step, what it folded in all and how long it took since it started. In
-- the last step's transaction: it commits with that step.
--   $1 notes folded (integer)   $2 milliseconds taken so far (integer)
insert into product_cost_refreshes (finished_at, notes, ms) values (clock_timestamp(), $1::int, $2::int)
on conflict (singleton) do update set finished_at = excluded.finished_at, notes = excluded.notes, ms = excluded.ms
