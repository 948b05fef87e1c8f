-- The notes one step of the refresh folds, read once at its snapshot into a scratch table of
-- its transaction (gone at commit); collect_changes.sql, clear_answers.sql and
-- count_folded.sql read them there, and forget_changes.sql deletes exactly these rows (by
-- their row ids: the log is only appended to, and only the refresh, under its lock, deletes).
-- A step of products ($1 through $2): their notes of months, every one of them: a month of the
-- window (migration 0013) is folded, one outside it only forgotten (its rows are read as they
-- are) and counted. The last step ($1 null): the notes of products' attributes, with $4 the
-- notes of everything (a rebuild's, when no other arrived while it ran), and with $3 (no window:
-- no date of the data is one a request can name) every note of a month.
--   $1 first product id   $2 last product id   $3 no window (boolean)   $4 everything (boolean)
create temporary table refresh_notes on commit drop as
select ctid as row_id, product_id, month, days, rows, noted_at
from product_cost_deltas
where ($1::bigint is not null and product_id between $1::bigint and $2::bigint and month is not null)
   or ($1::bigint is null and month is null and (product_id is not null or $4::boolean))
   or ($1::bigint is null and $3::boolean and month is not null)
