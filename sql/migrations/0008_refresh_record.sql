-- The refresh's record (product_cost_refreshes, 0006) also says when the refresh running now,
-- or the last one, started: a refresh records its start in a transaction of its own, then
-- works in steps that each commit, and records its end. With the advisory lock it holds while
-- it runs (pg_locks), GET /metrics tells a refresh that has run for long
-- (product_cost_export_rollup_refresh_running_seconds) from one that is not running, and
-- shows the last one's duration. A refresh that has started but never finished has no
-- finished_at.
alter table product_cost_refreshes add column if not exists started_at timestamptz;
alter table product_cost_refreshes alter column finished_at drop not null;

-- The months keep a tenth of each page free (new pages and rewritten rows only; no rewrite
-- now). Rows are about 800 bytes at a month's end, so a full page keeps a few hundred bytes
-- unused: with every page full to the brim, a new month's small rows (the ETL's month turn)
-- went into those gaps, one row per page all over the table (36,000 pages dirtied for 50,000
-- rows, 1.5 s), and the current month's rows, rewritten every day, moved page each time.
-- With the room kept, new rows go to pages of their own, in key order, and a day appended to
-- a row often stays on its page (0.26 s for the same insert, vacuum 0.5 s -> 0.03 s).
alter table product_cost_months set (fillfactor = 90);

-- After a note of everything in a transaction (a TRUNCATE before a reload, or
-- product_cost_changes_everything()), the writes that follow in that transaction note
-- nothing of their own: reads add up the daily rows while that note waits, and the refresh
-- rebuilds from them; no other transaction sees the writes before the note, so every answer
-- version still moves (the note counts for every range). An ETL's reload of 11 million daily
-- rows after its TRUNCATE spent about five minutes in these triggers. The flag is local to the
-- transaction (and to a savepoint that is rolled back with the note).
create or replace function product_cost_changes_everything() returns void
  language plpgsql security definer set search_path from current
as $fn$
begin
  insert into product_cost_deltas (product_id, month) values (null, null);
  perform set_config('product_cost_export.everything_noted', 'on', true);
end
$fn$;

create or replace function product_cost_deltas_of_insert() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  -- An upsert fires this trigger and the UPDATE one, one of them with no rows: nothing to note.
  if exists (select from new_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), '{}');
  end if;
  return null;
end
$fn$;

create or replace function product_cost_deltas_of_update() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  if exists (select from old_rows) then
    perform product_cost_deltas_note(array(select n::product_daily_costs from new_rows n), array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$fn$;

create or replace function product_cost_deltas_of_delete() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
begin
  if current_setting('product_cost_export.everything_noted', true) = 'on' then return null; end if;
  if exists (select from old_rows) then
    perform product_cost_deltas_note('{}', array(select o::product_daily_costs from old_rows o));
  end if;
  return null;
end
$fn$;
