-- The rollup keeps the months of a window of the data, not every month from a product's first
-- row to the data's last (issue 43). The months were dense over the span of the data's dates,
-- so one row dated 2099-12-31 among 50 products made 43,950 month rows and a 54 s refresh, one
-- dated 2999-12-31 a refresh that ran out of shared memory on every try, and `infinity` one that
-- failed for good. Now the refresh finds a window of months from the data (sql/refresh/window.sql:
-- the run of dates with no gap over a year that holds the most days) and keeps months for it
-- only; a row outside it is read as it is by each read that reaches it (its cost follows its
-- rows, as the naive GROUP BY's), and costs the refresh nothing.
--   window_first, window_last  the window's first and last month (null: no months yet)
--   outside_before, outside_after  the nearest month with rows outside the window on either
--     side, as far as the refresh knows (null: none): a window widened by notes over such a
--     month would take in rows no note names, so the refresh rebuilds instead.
--   failure, failed_at  what the last refresh could not fold and when (null: it folded all):
--     a step that fails is narrowed down to its product, recorded and logged, and the refresh
--     goes on with the others (GET /metrics, /readyz and an alert say it is failing).
alter table product_cost_refreshes
  add column if not exists window_first date,
  add column if not exists window_last date,
  add column if not exists outside_before date,
  add column if not exists outside_after date,
  add column if not exists failure text,
  add column if not exists failed_at timestamptz;

-- A rebuild the refresh decides on itself (`refresh --rebuild`, a window widened over rows no
-- note names) notes everything, so that reads add up the daily rows while the months are made
-- again, but no write changed the data: its note is marked (days = -1) and the answers'
-- versions (0007, 0009) count it neither while it waits nor once folded. A version a client
-- saw before such a rebuild still names the same answers after it (an unmarked note made every
-- version change; counted while waiting and not once folded, a version could come back with
-- other answers).
create or replace function product_cost_answer_version(first_day date, last_day date, out version text, out changed_at text)
  language plpgsql stable set plan_cache_mode = force_generic_plan set search_path from current
as $fn$
begin
  with bounds as (
    select first_day as first_day, last_day as last_day,
           date_trunc('month', first_day)::date as first_month, date_trunc('month', last_day)::date as last_month
  ),
  waiting as (
    select
      d.month, d.product_id, d.noted_at,
      -- The note's days inside the range: bits first_day..31 of the first month, 1..last_day of the last.
      case when d.month between b.first_month and b.last_month then bit_count((d.days::bigint
        & ((1::bigint << case when d.month = b.last_month then extract(day from b.last_day)::int else 31 end) - 1)
        & ~((1::bigint << case when d.month = b.first_month then extract(day from b.first_day)::int - 1 else 0 end) - 1)
      )::bit(64)) else 0 end as days
    from product_cost_deltas d cross join bounds b
    where not (d.product_id is null and d.month is null and d.days is not distinct from -1) -- a rebuild's own
  ),
  waiting_totals as (
    select
      coalesce(sum(days), 0) as days,
      count(*) filter (where month is null and product_id is not null) as attributes,
      count(*) filter (where product_id is null) as everything,
      max(noted_at) filter (where days > 0 or month is null) as changed_at
    from waiting
  ),
  folded as (
    select
      coalesce(sum(f.changes) filter (where f.day between b.first_day and b.last_day), 0) as days,
      coalesce(sum(f.changes) filter (where f.day = '-infinity'), 0) as attributes,
      coalesce(sum(f.changes) filter (where f.day = 'infinity'), 0) as everything,
      max(f.last_changed_at) as changed_at
    from product_cost_folded_changes f cross join bounds b
    where f.day between b.first_day and b.last_day or f.day in ('-infinity', 'infinity')
  )
  select
    concat_ws('.', 'product_cost_folded_changes'::regclass::oid,
      f.days + w.days, f.attributes + w.attributes, f.everything + w.everything) as version,
    to_char(greatest(f.changed_at, w.changed_at) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as changed_at
  from folded f, waiting_totals w
  into version, changed_at;
end
$fn$;

-- The months as they are were made without a window: `migrate`'s refresh rebuilds them (reads
-- add up the daily rows until it has). No data changed: the rebuild's own note.
insert into product_cost_deltas (product_id, month, days) values (null, null, -1);
