-- Product cost rows for GET /external/v1/product-costs.
--
-- Parameters:
--   $1 month_from (date, inclusive)   $2 month_to (date, inclusive)
--   $3 segment: 'normal' (is_sample = false), 'sample' (is_sample = true) or 'all'
-- Returns one row per product with at least one product_daily_costs row whose
-- cost_date lies in [$1, $2]. Each amount is the SQL SUM of its column over those rows,
-- so it is null only when every value is null (not costed) and 0 for a costed zero.
-- trim_scale drops the numeric(20,6) trailing zeros so the text is the shortest exact
-- decimal (100.5, not 100.500000). Ids and amounts come back as exact text.
-- Order: erp_sku in byte order (collate "C", the same on every server and locale),
-- nulls last, then erp_product_id, then the internal product_id.
-- A range that is exactly one calendar month, quarter or year is read with
-- product_costs_one_period.sql instead (src/db/product-costs.ts chooses); this query
-- returns the same rows for it, only slower.
--
-- How: the range is read from the rollup product_period_costs (migration 0003, kept
-- current by triggers: per product, the sum and the count of non-null values of each
-- column per month, quarter and year) wherever it covers whole periods, and from
-- product_daily_costs (through its date index) for the days before the first and after
-- the last whole month. The range [$1, $2 + 1) splits, largest periods first, into
--   years     [year_lo, year_hi)
--   quarters  [quarter_lo, least(year_lo, quarter_hi))  and  [greatest(year_hi, year_lo), quarter_hi)
--   months    [month_lo, least(quarter_lo, month_hi))   and  [greatest(quarter_hi, quarter_lo), month_hi)
--   days      [$1, least(month_lo, $2 + 1))             and  [greatest(month_hi, month_lo), $2 + 1)
-- where X_lo is the first X boundary on or after $1 and X_hi the last on or before $2 + 1
-- (a level has whole periods only when X_lo < X_hi; otherwise its two pieces are the whole
-- range of the level below). The pieces are disjoint and cover the range exactly: e.g.
-- 2024-11-01 .. 2026-10-31 reads Nov and Dec 2024, the year 2025, Q1-Q3 2026 and Oct 2026,
-- seven rollup rows per product and no daily row; 2024-01-15 .. 2024-04-10 reads Jan 15-31,
-- Feb, Mar and Apr 1-10.
-- A single day reads its daily rows as they are (one per product, no aggregation); any
-- other range adds up the pieces per product with
-- cost_total (numeric addition with a small state, see 0003; 0 when every input is null,
-- the counts decide null) and full-joins the two per-product totals. Per column
-- the pieces carry the sum of the non-null values and their count, so the result is null
-- exactly when no value in the range is non-null, as SUM would give.
-- The bounds are immutable expressions of $1 and $2 (no time zone involved; `bounds` is
-- inlined, not materialized), so the planner folds them to constants, drops the path not
-- taken, and estimates each piece from the statistics.
with bounds as not materialized (
  select
    $1::date                                                                        as first_day,
    $2::date + 1                                                                    as end_day,
    (date_trunc('month',   ($1::date - 1)::timestamp) + interval '1 month')::date   as month_lo,
    date_trunc('month',    ($2::date + 1)::timestamp)::date                         as month_hi,
    (date_trunc('quarter', ($1::date - 1)::timestamp) + interval '3 months')::date  as quarter_lo,
    date_trunc('quarter',  ($2::date + 1)::timestamp)::date                         as quarter_hi,
    (date_trunc('year',    ($1::date - 1)::timestamp) + interval '1 year')::date    as year_lo,
    date_trunc('year',     ($2::date + 1)::timestamp)::date                         as year_hi,
    $1::date = $2::date                                                             as single_day
),
one_day as (
  select
    d.product_id,
    d.purchase_cost_usd,        (d.purchase_cost_usd is not null)::int        as purchase_cost_usd_count,
    d.inbound_freight_usd,      (d.inbound_freight_usd is not null)::int      as inbound_freight_usd_count,
    d.shipping_to_customer_usd, (d.shipping_to_customer_usd is not null)::int as shipping_to_customer_usd_count,
    d.warehouse_fees_usd,       (d.warehouse_fees_usd is not null)::int       as warehouse_fees_usd_count
  from bounds b
  join product_daily_costs d on b.single_day and d.cost_date = b.first_day
),
periods as (
  select
    r.product_id,
    cost_total(r.purchase_cost_usd_sum)        as purchase_cost_usd,        sum(r.purchase_cost_usd_count)        as purchase_cost_usd_count,
    cost_total(r.inbound_freight_usd_sum)      as inbound_freight_usd,      sum(r.inbound_freight_usd_count)      as inbound_freight_usd_count,
    cost_total(r.shipping_to_customer_usd_sum) as shipping_to_customer_usd, sum(r.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
    cost_total(r.warehouse_fees_usd_sum)       as warehouse_fees_usd,       sum(r.warehouse_fees_usd_count)       as warehouse_fees_usd_count
  from bounds b
  join product_period_costs r on not b.single_day and (
       (r.period = 'year' and r.period_start >= b.year_lo and r.period_start < b.year_hi)
    or (r.period = 'quarter' and (   (r.period_start >= b.quarter_lo and r.period_start < least(b.year_lo, b.quarter_hi))
                                  or (r.period_start >= greatest(b.year_hi, b.year_lo) and r.period_start < b.quarter_hi)))
    or (r.period = 'month' and (   (r.period_start >= b.month_lo and r.period_start < least(b.quarter_lo, b.month_hi))
                                or (r.period_start >= greatest(b.quarter_hi, b.quarter_lo) and r.period_start < b.month_hi))))
  group by r.product_id
),
days as (
  select
    d.product_id,
    cost_total(d.purchase_cost_usd)        as purchase_cost_usd,        count(d.purchase_cost_usd)        as purchase_cost_usd_count,
    cost_total(d.inbound_freight_usd)      as inbound_freight_usd,      count(d.inbound_freight_usd)      as inbound_freight_usd_count,
    cost_total(d.shipping_to_customer_usd) as shipping_to_customer_usd, count(d.shipping_to_customer_usd) as shipping_to_customer_usd_count,
    cost_total(d.warehouse_fees_usd)       as warehouse_fees_usd,       count(d.warehouse_fees_usd)       as warehouse_fees_usd_count
  from bounds b
  join product_daily_costs d on not b.single_day and (
       (d.cost_date >= b.first_day and d.cost_date < least(b.month_lo, b.end_day))
    or (d.cost_date >= greatest(b.month_hi, b.month_lo) and d.cost_date < b.end_day))
  group by d.product_id
),
totals as (
  select * from one_day
  union all
  select
    coalesce(r.product_id, d.product_id),
    coalesce(r.purchase_cost_usd, 0) + coalesce(d.purchase_cost_usd, 0),
    coalesce(r.purchase_cost_usd_count, 0) + coalesce(d.purchase_cost_usd_count, 0),
    coalesce(r.inbound_freight_usd, 0) + coalesce(d.inbound_freight_usd, 0),
    coalesce(r.inbound_freight_usd_count, 0) + coalesce(d.inbound_freight_usd_count, 0),
    coalesce(r.shipping_to_customer_usd, 0) + coalesce(d.shipping_to_customer_usd, 0),
    coalesce(r.shipping_to_customer_usd_count, 0) + coalesce(d.shipping_to_customer_usd_count, 0),
    coalesce(r.warehouse_fees_usd, 0) + coalesce(d.warehouse_fees_usd, 0),
    coalesce(r.warehouse_fees_usd_count, 0) + coalesce(d.warehouse_fees_usd_count, 0)
  from periods r
  full join days d on d.product_id = r.product_id
)
select
  p.erp_product_id,
  p.erp_sku,
  p.product_name,
  trim_scale(case when t.purchase_cost_usd_count > 0 then t.purchase_cost_usd end)               as purchase_cost_usd,
  trim_scale(case when t.inbound_freight_usd_count > 0 then t.inbound_freight_usd end)           as inbound_freight_usd,
  trim_scale(case when t.shipping_to_customer_usd_count > 0 then t.shipping_to_customer_usd end) as shipping_to_customer_usd,
  trim_scale(case when t.warehouse_fees_usd_count > 0 then t.warehouse_fees_usd end)             as warehouse_fees_usd
from totals t
join products p on p.product_id = t.product_id
where $3::text = 'all' or p.is_sample = ($3::text = 'sample')
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
