-- The notes one step of the refresh folds, read once at its snapshot into a scratch table of
-- its transaction (gone at commit); collect_changes.sql, clear_answers.sql and
-- count_folded.sql read them there, and forget_changes.sql deletes exactly these rows (by
-- their row ids: the log is only appended to, and only the refresh, under its lock, deletes).
-- A step of products ($1 through $2): their notes of months through the rollup's last month
-- ($3). A note of a later month waits for the refresh that adds that month, unless no daily
-- row lies past $3 at this snapshot: then the notes there add up to nothing (their rows were
-- written and deleted again) and are folded as such. The last step ($1 null): the notes of
-- products' attributes, and with $4 the notes of everything (a rebuild's, when no other
-- arrived while it ran).
--   $1 first product id   $2 last product id   $3 last month (date)   $4 everything (boolean)
create temporary table refresh_notes on commit drop as
select ctid as row_id, product_id, month, days, noted_at
from product_cost_deltas
where ($1::bigint is not null and product_id between $1::bigint and $2::bigint and month is not null
       and (month <= $3::date
            or not exists (select from product_daily_costs where cost_date >= ($3::date + interval '1 month')::date)))
   or ($1::bigint is null and month is null and (product_id is not null or $4::boolean))
