-- Product cost rows for GET /external/v1/product-costs.
--
-- Parameters:
--   $1 month_from (date, inclusive)   $2 month_to (date, inclusive)
--   $3 segment: 'normal' (is_sample = false), 'sample' (is_sample = true) or 'all'
-- Returns one row per product with at least one product_daily_costs row whose cost_date
-- lies in [$1, $2]. Each amount is the SQL SUM of its column over those rows, a NaN counted
-- as null, so it is null only when no value is a number (not costed) and 0 for a costed
-- zero. trim_scale drops the numeric(20,6) trailing zeros so the text is the shortest exact
-- decimal (100.5, not 100.500000). Ids and amounts come back as exact text.
-- Order: erp_sku in byte order (collate "C", the same on every server and locale), nulls
-- last, then erp_product_id, then the internal product_id.
--
-- How (migration 0006): a product's totals over [$1, $2] are its totals through $2 less its
-- totals through the day before $1. Each is one row of product_cost_months: the totals
-- before the month, plus, within it, the running sum at the last day with a row up to the
-- edge (the k-th element, k the number of days with a row before the edge: a popcount of
-- the month's bitmask) and the popcount of each amount's bitmask up to the edge. Inside one
-- month both edges are in the same row (one row per product); otherwise the months of $1
-- and $2 (two rows per product). A month after the last one of the rollup is that last
-- month, whole. Then the notes writers left since the last refresh (product_cost_deltas)
-- are added the same way: each note's change through $2 less its change before $1. After a
-- TRUNCATE (a note of everything), the whole range is added up from the daily rows until
-- the next refresh. (A single day has a statement of its own: product_costs_one_day.sql.)
-- The months are those of a window of the data (migration 0013, issue 43): the range's days
-- outside it (a sentinel such as 9999-12-31, a year typed wrong) are added up from their daily
-- rows, found by the date index, and the notes of months outside it are not counted twice.
-- The statement reads every table at one snapshot, so it equals a GROUP BY over the daily
-- rows at that snapshot, whether or not a refresh ran in between.
-- The bounds are immutable expressions of $1 and $2 (no time zone involved; `bounds` is
-- inlined, not materialized), so the planner folds them to constants: the months looked up
-- by key, the masks, and which of the parts below a range has at all.
with bounds as not materialized (
  select
    date_trunc('month', $1::date::timestamp)::date                  as from_month,
    date_trunc('month', $2::date::timestamp)::date                  as to_month,
    -- Bit d-1 stands for day d: the days of from_month before $1, of to_month through $2.
    ((1::bigint << (extract(day from $1::date)::int - 1)) - 1)::int as before_first,
    ((1::bigint << extract(day from $2::date)::int) - 1)::int       as through_last
),
-- Facts of the whole database, each computed once (an InitPlan) and then a constant of the
-- plan: whether the log names everything, the last month of the rollup, and whether this
-- range is cheaper to add up from its daily rows than to read from the rollup.
facts as not materialized (
  select
    (select exists (select 1 from product_cost_deltas where product_id is null)) as everything,
    (select max(month) from product_cost_months)                              as last,
    -- The window of months (0013): its first day and the day after it (null: no window).
    (select window_first from product_cost_refreshes)                          as window_first,
    (select (window_last + interval '1 month')::date from product_cost_refreshes) as window_after,
    (select exists (select 1 from product_cost_deltas where product_id is null))
    or (select window_last from product_cost_refreshes) is null or coalesce(
      -- The range's daily rows (its days × the table's rows per day of data, from the planner's
      -- statistics) against the rollup's (a row per product, two for a range over several
      -- months), weighed by what each costs to read (measured at 50,000 products,
      -- docs/performance.md). So a day or two, or a short range across a month's end, is
      -- added up from its daily rows, like the naive GROUP BY. The rows per day are the window's
      -- (the data's span would count a far date's years: `infinity` could not even be subtracted).
      ($2::date - $1::date + 1)
        * (select reltuples from pg_class where oid = 'product_daily_costs'::regclass)
        / nullif((select (window_last + interval '1 month')::date - window_first from product_cost_refreshes), 0)
      < (select reltuples from pg_class where oid = 'products'::regclass)
        * case when date_trunc('month', $1::date::timestamp) = date_trunc('month', $2::date::timestamp) then 0.7 else 2 end,
      false) as by_day
),
-- A range inside one month: both edges from that month's row (none when the month is past
-- the rollup's last: nothing folded there).
one_month as (
  select
    m.product_id,
    m.k_last - m.k_first                                                                                             as n,
    coalesce(m.purchase_cost_usd[m.k_last], 0) - coalesce(m.purchase_cost_usd[m.k_first], 0)                         as pc,
    bit_count((m.purchase_cost_usd_days & m.range)::bit(32))                                                         as pcn,
    coalesce(m.inbound_freight_usd[m.k_last], 0) - coalesce(m.inbound_freight_usd[m.k_first], 0)                     as fr,
    bit_count((m.inbound_freight_usd_days & m.range)::bit(32))                                                       as frn,
    coalesce(m.shipping_to_customer_usd[m.k_last], 0) - coalesce(m.shipping_to_customer_usd[m.k_first], 0)           as sh,
    bit_count((m.shipping_to_customer_usd_days & m.range)::bit(32))                                                  as shn,
    coalesce(m.warehouse_fees_usd[m.k_last], 0) - coalesce(m.warehouse_fees_usd[m.k_first], 0)                       as wf,
    bit_count((m.warehouse_fees_usd_days & m.range)::bit(32))                                                        as wfn
  from (
    -- OFFSET 0 keeps this a subquery, so each k is computed once per row, not once per use.
    select m.*, b.through_last & ~b.before_first as range,
      bit_count((m.days & b.before_first)::bit(32))::int as k_first,
      bit_count((m.days & b.through_last)::bit(32))::int as k_last
    from bounds b cross join facts f
    join product_cost_months m on m.month = b.to_month
    where b.from_month = b.to_month and not f.by_day
    offset 0
  ) m
),
-- A range over several months: the totals through $2 (the month of $2, or the rollup's last
-- month whole when $2 is past it)...
through_last as (
  select
    m.product_id,
    m.rows_before + m.k                                                                             as n,
    m.purchase_cost_usd_before + coalesce(m.purchase_cost_usd[m.k], 0)                              as pc,
    m.purchase_cost_usd_count_before + bit_count((m.purchase_cost_usd_days & m.mask)::bit(32))      as pcn,
    m.inbound_freight_usd_before + coalesce(m.inbound_freight_usd[m.k], 0)                          as fr,
    m.inbound_freight_usd_count_before + bit_count((m.inbound_freight_usd_days & m.mask)::bit(32))  as frn,
    m.shipping_to_customer_usd_before + coalesce(m.shipping_to_customer_usd[m.k], 0)                as sh,
    m.shipping_to_customer_usd_count_before + bit_count((m.shipping_to_customer_usd_days & m.mask)::bit(32)) as shn,
    m.warehouse_fees_usd_before + coalesce(m.warehouse_fees_usd[m.k], 0)                            as wf,
    m.warehouse_fees_usd_count_before + bit_count((m.warehouse_fees_usd_days & m.mask)::bit(32))    as wfn
  from (
    -- The month of $2 by its constant key, so that the planner keeps the one partition of it
    -- (0011) and knows its size; past the rollup's last month, that month whole.
    select m.*, b.through_last as mask, bit_count((m.days & b.through_last)::bit(32))::int as k
    from bounds b cross join facts f
    join product_cost_months m on m.month = b.to_month
    where b.from_month < b.to_month and b.to_month <= f.last and not f.by_day
    union all
    select m.*, -1 as mask, bit_count(m.days::bit(32))::int as k
    from bounds b cross join facts f
    join product_cost_months m on m.month = f.last
    where b.from_month < b.to_month and b.from_month <= f.last and b.to_month > f.last and not f.by_day
    offset 0
  ) m
),
-- ...less the totals before $1 (the month of $1; no row: nothing before it).
before_first as (
  select
    m.product_id,
    m.rows_before + m.k                                                                             as n,
    m.purchase_cost_usd_before + coalesce(m.purchase_cost_usd[m.k], 0)                              as pc,
    m.purchase_cost_usd_count_before + bit_count((m.purchase_cost_usd_days & m.mask)::bit(32))      as pcn,
    m.inbound_freight_usd_before + coalesce(m.inbound_freight_usd[m.k], 0)                          as fr,
    m.inbound_freight_usd_count_before + bit_count((m.inbound_freight_usd_days & m.mask)::bit(32))  as frn,
    m.shipping_to_customer_usd_before + coalesce(m.shipping_to_customer_usd[m.k], 0)                as sh,
    m.shipping_to_customer_usd_count_before + bit_count((m.shipping_to_customer_usd_days & m.mask)::bit(32)) as shn,
    m.warehouse_fees_usd_before + coalesce(m.warehouse_fees_usd[m.k], 0)                            as wf,
    m.warehouse_fees_usd_count_before + bit_count((m.warehouse_fees_usd_days & m.mask)::bit(32))    as wfn
  from (
    select m.*, b.before_first as mask, bit_count((m.days & b.before_first)::bit(32))::int as k
    from bounds b cross join facts f
    join product_cost_months m on m.month = b.from_month
    where b.from_month < b.to_month and b.from_month <= f.last and not f.by_day
    offset 0
  ) m
),
several_months as (
  select
    t.product_id,
    t.n - coalesce(f.n, 0) as n,
    t.pc - coalesce(f.pc, 0) as pc, t.pcn - coalesce(f.pcn, 0) as pcn,
    t.fr - coalesce(f.fr, 0) as fr, t.frn - coalesce(f.frn, 0) as frn,
    t.sh - coalesce(f.sh, 0) as sh, t.shn - coalesce(f.shn, 0) as shn,
    t.wf - coalesce(f.wf, 0) as wf, t.wfn - coalesce(f.wfn, 0) as wfn
  from through_last t
  left join before_first f on f.product_id = t.product_id
),
-- The range's daily rows: a short range, or any after a change of everything (until the next refresh).
by_day as (
  select
    product_id, n,
    coalesce(pc, 0) as pc, (pc is not null)::int as pcn, coalesce(fr, 0) as fr, (fr is not null)::int as frn,
    coalesce(sh, 0) as sh, (sh is not null)::int as shn, coalesce(wf, 0) as wf, (wf is not null)::int as wfn
  from (
    select
      d.product_id, count(*) as n,
      sum(nullif(d.purchase_cost_usd, 'NaN')) as pc, sum(nullif(d.inbound_freight_usd, 'NaN')) as fr,
      sum(nullif(d.shipping_to_customer_usd, 'NaN')) as sh, sum(nullif(d.warehouse_fees_usd, 'NaN')) as wf
    from facts f cross join product_daily_costs d
    where f.by_day and d.cost_date >= $1::date and d.cost_date <= $2::date
    group by d.product_id
  ) d
),
folded as (
  select * from one_month
  union all
  select * from several_months
  union all
  select * from by_day
),
-- The notes of the months from $1's through $2's (a note of an earlier month moves both
-- edges alike, one of a later month neither), of the window's months: each note's change
-- through $2 (all of it before $2's month) less its change before $1 (none after $1's month),
-- per product. And the range's daily rows outside the window, as they are.
noted as (
  select
    c.product_id,
    sum(coalesce(c.rows[c.k_last], 0) - coalesce(c.rows[c.k_first], 0))                                           as n,
    sum(coalesce(c.purchase_cost_usd[c.k_last], 0) - coalesce(c.purchase_cost_usd[c.k_first], 0))                 as pc,
    sum(coalesce(c.purchase_cost_usd_count[c.k_last], 0) - coalesce(c.purchase_cost_usd_count[c.k_first], 0))     as pcn,
    sum(coalesce(c.inbound_freight_usd[c.k_last], 0) - coalesce(c.inbound_freight_usd[c.k_first], 0))             as fr,
    sum(coalesce(c.inbound_freight_usd_count[c.k_last], 0) - coalesce(c.inbound_freight_usd_count[c.k_first], 0)) as frn,
    sum(coalesce(c.shipping_to_customer_usd[c.k_last], 0) - coalesce(c.shipping_to_customer_usd[c.k_first], 0))   as sh,
    sum(coalesce(c.shipping_to_customer_usd_count[c.k_last], 0) - coalesce(c.shipping_to_customer_usd_count[c.k_first], 0)) as shn,
    sum(coalesce(c.warehouse_fees_usd[c.k_last], 0) - coalesce(c.warehouse_fees_usd[c.k_first], 0))               as wf,
    sum(coalesce(c.warehouse_fees_usd_count[c.k_last], 0) - coalesce(c.warehouse_fees_usd_count[c.k_first], 0))   as wfn
  from (
    select c.*,
      case when c.month = b.to_month then bit_count((c.days & b.through_last)::bit(32))::int else cardinality(c.rows) end as k_last,
      case when c.month = b.from_month then bit_count((c.days & b.before_first)::bit(32))::int else 0 end as k_first
    from bounds b cross join facts f
    join product_cost_deltas c on c.month >= b.from_month and c.month <= b.to_month
    where not f.by_day and c.product_id is not null and c.month >= f.window_first and c.month < f.window_after
    offset 0
  ) c
  group by c.product_id
),
outside as (
  -- Two ranges of the date index: the range's days before the window, and after it.
  select
    d.product_id, count(*) as n,
    coalesce(sum(nullif(d.purchase_cost_usd, 'NaN')), 0) as pc, count(nullif(d.purchase_cost_usd, 'NaN')) as pcn,
    coalesce(sum(nullif(d.inbound_freight_usd, 'NaN')), 0) as fr, count(nullif(d.inbound_freight_usd, 'NaN')) as frn,
    coalesce(sum(nullif(d.shipping_to_customer_usd, 'NaN')), 0) as sh, count(nullif(d.shipping_to_customer_usd, 'NaN')) as shn,
    coalesce(sum(nullif(d.warehouse_fees_usd, 'NaN')), 0) as wf, count(nullif(d.warehouse_fees_usd, 'NaN')) as wfn
  from (
    select d.* from facts f cross join product_daily_costs d
    where not f.by_day and d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date < f.window_first
    union all
    select d.* from facts f cross join product_daily_costs d
    where not f.by_day and d.cost_date >= $1::date and d.cost_date <= $2::date and d.cost_date >= f.window_after
  ) d
  group by d.product_id
),
waiting as (
  select product_id, sum(n) as n, sum(pc) as pc, sum(pcn) as pcn, sum(fr) as fr, sum(frn) as frn,
    sum(sh) as sh, sum(shn) as shn, sum(wf) as wf, sum(wfn) as wfn
  from (select * from noted union all select * from outside) w
  group by product_id
),
totals as (
  -- A join, not a union and a GROUP BY: the folded part is one row per product already,
  -- and usually nothing waits (a + null is null: the folded value as it is).
  select
    coalesce(f.product_id, w.product_id) as product_id,
    coalesce(f.n + w.n, f.n, w.n) as n,
    coalesce(f.pc + w.pc, f.pc, w.pc) as pc, coalesce(f.pcn + w.pcn, f.pcn, w.pcn) as pcn,
    coalesce(f.fr + w.fr, f.fr, w.fr) as fr, coalesce(f.frn + w.frn, f.frn, w.frn) as frn,
    coalesce(f.sh + w.sh, f.sh, w.sh) as sh, coalesce(f.shn + w.shn, f.shn, w.shn) as shn,
    coalesce(f.wf + w.wf, f.wf, w.wf) as wf, coalesce(f.wfn + w.wfn, f.wfn, w.wfn) as wfn
  from folded f
  full join waiting w on w.product_id = f.product_id
)
select
  p.erp_product_id,
  p.erp_sku,
  p.product_name,
  trim_scale(case when t.pcn > 0 then t.pc end) as purchase_cost_usd,
  trim_scale(case when t.frn > 0 then t.fr end) as inbound_freight_usd,
  trim_scale(case when t.shn > 0 then t.sh end) as shipping_to_customer_usd,
  trim_scale(case when t.wfn > 0 then t.wf end) as warehouse_fees_usd
from totals t
join products p on p.product_id = t.product_id
where t.n > 0
  and ($3::text = 'all' or p.is_sample = ($3::text = 'sample'))
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
