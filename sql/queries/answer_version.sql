-- The version of the answers for the range [$1, $2] (migration 0007): three counts that
-- only grow, and only when a committed write changes the range's days, a product's
-- attributes, or everything. Read before the rows (or instead of them, for a 304): a
-- version never names a state newer than the rows read after it. The table's oid tells a
-- table made again (a restore) from the one whose counts a client saw.
-- Also changed_at: when a write last changed what the range shows, ISO 8601 in UTC to the
-- millisecond (null: none recorded).
--   $1 first day (date)   $2 last day (date)
with bounds as (
  select $1::date as first_day, $2::date as last_day,
         date_trunc('month', $1::date)::date as first_month, date_trunc('month', $2::date)::date as last_month
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
