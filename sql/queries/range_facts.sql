-- The head of a read of a range from the rollup (src/reads/edges/range-read.ts), read first in the rows'
-- snapshot: the range's answer version (answer_version.sql: what its ETag names), whether the
-- rollup can be read as edges (a window recorded, no note of everything waiting: else the
-- daily rows answer, product_costs_daily.sql), and what the service's held edges and catalogue
-- are keyed by (src/reads/edges/edge-store.ts): the window, and the versions of the days each one adds up.
--
-- An edge through day d (product_costs_edge.sql) is every product's totals over the window's
-- days through d: it changes only when a write changes a day in [window_first, d] (its version
-- moves), or the window itself moves (a refresh widened it, or added a month). The catalogue
-- (product_catalogue.sql) changes only with a product's attributes, or with a product whose id
-- is used again: its daily rows deleted and others written, days of some range in
-- 0001-01-01..9999-12-31, the only ranges a request can name. So the catalogue is keyed by the
-- version of that whole domain.
--
-- The three keys are product_cost_answer_version(window_first, d) for d = $2, $1 - 1 and the
-- whole domain, computed here in one pass over the notes waiting and one over the folded
-- counts: the same arithmetic as the function's (migration 0009), term for term;
-- tests/db/edges.test.ts compares them with the function's versions under random writes and
-- refreshes. Only while at most 1,000 notes wait (`edges`): past that (a day's write for every
-- product, a month rewritten) every edge a write touched is to be read again anyway, and each
-- pass over the notes costs about what the answer's version does (40 ms for 50,000 notes at
-- 50,000 products), so the range is read by its one statement until the refresh has folded
-- them, with the head no dearer than that statement's own version.
--
-- Parameters: $1 the range's first day, $2 its last (dates, inclusive).
-- Returns one row: version, changed_at, readable, window_first, window_last, last_month, edges
-- (whether the keys were computed: readable, and few notes waiting), through_version (of [window_first, $2]), before_version (of [window_first, $1 - 1]; null
-- when $1 is not after window_first: that edge is empty), catalogue_version.
with facts as materialized (
  select
    r.window_first, r.window_last,
    (select max(month) from product_cost_months) as last_month,
    r.window_last is not null and not exists (select from product_cost_deltas where product_id is null) as readable,
    (select count(*) from (select from product_cost_deltas limit 1001) n) <= 1000 as few_notes
  from (select
          (select window_first from product_cost_refreshes) as window_first,
          (select window_last from product_cost_refreshes) as window_last) r
),
-- The two edges' spans: [a, t] and [a, b], a the window's first day.
spans as not materialized (
  select
    f.window_first as a, date_trunc('month', f.window_first::timestamp)::date as a_month,
    $2::date as t, date_trunc('month', $2::date::timestamp)::date as t_month,
    $1::date - 1 as b, date_trunc('month', ($1::date - 1)::timestamp)::date as b_month
  from facts f
),
-- The notes waiting: per span, the note's days inside it (bits a..31 of a's month, 1..d of the
-- last month), as the function counts them; the rebuild's own note counts nowhere.
waiting as (
  select
    coalesce(sum(case when d.month between s.a_month and s.t_month then bit_count((d.days::bigint
      & ((1::bigint << case when d.month = s.t_month then extract(day from s.t)::int else 31 end) - 1)
      & ~((1::bigint << case when d.month = s.a_month then extract(day from s.a)::int - 1 else 0 end) - 1)
    )::bit(64)) else 0 end), 0) as through_days,
    coalesce(sum(case when d.month between s.a_month and s.b_month then bit_count((d.days::bigint
      & ((1::bigint << case when d.month = s.b_month then extract(day from s.b)::int else 31 end) - 1)
      & ~((1::bigint << case when d.month = s.a_month then extract(day from s.a)::int - 1 else 0 end) - 1)
    )::bit(64)) else 0 end), 0) as before_days,
    coalesce(sum(case when d.month between '0001-01-01' and '9999-12-01' then bit_count((d.days::bigint
      & ((1::bigint << 31) - 1))::bit(64)) else 0 end), 0) as all_days,
    count(*) filter (where d.month is null and d.product_id is not null) as attributes,
    count(*) filter (where d.product_id is null) as everything
  from product_cost_deltas d cross join spans s cross join facts f
  where f.readable and f.few_notes and not (d.product_id is null and d.month is null and d.days is not distinct from -1)
),
folded as (
  select
    coalesce(sum(c.changes) filter (where c.day between s.a and s.t), 0) as through_days,
    coalesce(sum(c.changes) filter (where c.day between s.a and s.b), 0) as before_days,
    coalesce(sum(c.changes) filter (where c.day between '0001-01-01' and '9999-12-31'), 0) as all_days,
    coalesce(sum(c.changes) filter (where c.day = '-infinity'), 0) as attributes,
    coalesce(sum(c.changes) filter (where c.day = 'infinity'), 0) as everything
  from product_cost_folded_changes c cross join spans s cross join facts f
  where f.readable and f.few_notes
),
keys as (
  select
    concat_ws('.', 'product_cost_folded_changes'::regclass::oid, fo.through_days + w.through_days, fo.attributes + w.attributes, fo.everything + w.everything) as through_version,
    concat_ws('.', 'product_cost_folded_changes'::regclass::oid, fo.before_days + w.before_days, fo.attributes + w.attributes, fo.everything + w.everything) as before_version,
    concat_ws('.', 'product_cost_folded_changes'::regclass::oid, fo.all_days + w.all_days, fo.attributes + w.attributes, fo.everything + w.everything) as catalogue_version
  from folded fo, waiting w
)
select
  v.version, v.changed_at, f.readable::text as readable,
  f.window_first::text as window_first, f.window_last::text as window_last, f.last_month::text as last_month,
  (f.readable and f.few_notes)::text as edges,
  case when f.readable and f.few_notes and $2::date >= f.window_first then k.through_version end as through_version,
  case when f.readable and f.few_notes and $1::date > f.window_first then k.before_version end as before_version,
  case when f.readable and f.few_notes then k.catalogue_version end as catalogue_version
from product_cost_answer_version($1::date, $2::date) v, facts f, keys k
