-- The head of a read of a range from the rollup (src/db/range-read.ts), read first in the rows'
-- snapshot: the range's answer version (answer_version.sql: what its ETag names), whether the
-- rollup can be read as edges (a window recorded, no note of everything waiting: else the
-- daily rows answer, product_costs_daily.sql), and what the service's held edges and catalogue
-- are keyed by (src/db/edge-store.ts): the window, and the versions of the days each one adds up.
--
-- An edge through day d (product_costs_edge.sql) is every product's totals over the window's
-- days through d: it changes only when a write changes a day in [window_first, d] (its version
-- moves), or the window itself moves (a refresh widened it, or added a month). The catalogue
-- (product_catalogue.sql) changes only with a product's attributes, or with a product whose id
-- is used again: its daily rows deleted and others written, days of some range in
-- 0001-01-01..9999-12-31, the only ranges a request can name. So the catalogue is keyed by the
-- version of that whole domain.
--
-- Parameters: $1 the range's first day, $2 its last (dates, inclusive).
-- Returns one row: version, changed_at, readable, window_first, window_last, last_month,
-- through_version (of [window_first, $2]), before_version (of [window_first, $1 - 1]; null
-- when $1 is not after window_first: that edge is empty), catalogue_version.
with facts as not materialized (
  select
    r.window_first, r.window_last,
    (select max(month) from product_cost_months) as last_month,
    r.window_last is not null and not exists (select from product_cost_deltas where product_id is null) as readable
  from (select
          (select window_first from product_cost_refreshes) as window_first,
          (select window_last from product_cost_refreshes) as window_last) r
)
select
  v.version, v.changed_at, f.readable::text as readable,
  f.window_first::text as window_first, f.window_last::text as window_last, f.last_month::text as last_month,
  (select t.version from product_cost_answer_version(f.window_first, $2::date) t where f.readable and $2::date >= f.window_first) as through_version,
  (select b.version from product_cost_answer_version(f.window_first, $1::date - 1) b where f.readable and $1::date > f.window_first) as before_version,
  (select c.version from product_cost_answer_version('0001-01-01', '9999-12-31') c where f.readable) as catalogue_version
from product_cost_answer_version($1::date, $2::date) v, facts f
