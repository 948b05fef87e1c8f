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
-- How (migration 0005): the range [$1, $2 + 1) has whole months [month_lo, month_hi) and
-- days before and after them. For the whole months, a product's totals are the difference
-- of two rows of product_month_costs (totals to date): through the month before month_hi,
-- less through the month before month_lo; both lookups clamp to the last month with any
-- data (`last`), through which every product with data has a row. That holds for every
-- (product, month) the refresh has seen; for the ones product_cost_changes names (written
-- since), the month's stale share (the difference of its two rows) is taken out and its daily
-- rows added instead. The days at either end always come from the daily rows, through the
-- date index. After a TRUNCATE (a change of everything), the whole range is added up from
-- the daily rows until the next refresh. (A single day has a statement of its own:
-- product_costs_one_day.sql.)
-- The query reads every table at one snapshot, so it equals a GROUP BY over the daily rows
-- at that snapshot, whether or not a refresh ran in between.
-- The bounds are immutable expressions of $1 and $2 (no time zone involved; `bounds` is
-- inlined, not materialized), so the planner folds them to constants and drops the parts
-- a range does not have.
with bounds as not materialized (
  select
    $1::date                                                                       as first_day,
    $2::date + 1                                                                   as end_day,
    (date_trunc('month', ($1::date - 1)::timestamp) + interval '1 month')::date    as month_lo,
    date_trunc('month', ($2::date + 1)::timestamp)::date                           as month_hi
),
-- Two facts of the whole database, each computed once (an InitPlan) and then a constant of
-- the plan: whether the log names everything, and the last month of the totals to date.
-- Each part below is gated on the first by a one-time filter, so it keeps its own index.
facts as not materialized (
  select
    (select exists (select 1 from product_cost_changes where product_id is null)) as everything,
    (select max(month) from product_month_costs)                                  as last
),
-- The changed (product, month) pairs inside the whole months of the range.
changed as materialized (
  select distinct c.product_id, c.month
  from product_cost_changes c, bounds b
  where c.product_id is not null and c.month >= b.month_lo and c.month < b.month_hi
),
-- Whole months from the totals to date: through month_hi - 1 month, less through month_lo - 1 month.
whole_months as (
  select
    e.product_id,
    e.rows_to_date                          - coalesce(s.rows_to_date, 0)                          as row_count,
    e.purchase_cost_usd_to_date             - coalesce(s.purchase_cost_usd_to_date, 0)             as purchase_cost_usd,
    e.purchase_cost_usd_count_to_date       - coalesce(s.purchase_cost_usd_count_to_date, 0)       as purchase_cost_usd_count,
    e.inbound_freight_usd_to_date           - coalesce(s.inbound_freight_usd_to_date, 0)           as inbound_freight_usd,
    e.inbound_freight_usd_count_to_date     - coalesce(s.inbound_freight_usd_count_to_date, 0)     as inbound_freight_usd_count,
    e.shipping_to_customer_usd_to_date      - coalesce(s.shipping_to_customer_usd_to_date, 0)      as shipping_to_customer_usd,
    e.shipping_to_customer_usd_count_to_date - coalesce(s.shipping_to_customer_usd_count_to_date, 0) as shipping_to_customer_usd_count,
    e.warehouse_fees_usd_to_date            - coalesce(s.warehouse_fees_usd_to_date, 0)            as warehouse_fees_usd,
    e.warehouse_fees_usd_count_to_date      - coalesce(s.warehouse_fees_usd_count_to_date, 0)      as warehouse_fees_usd_count
  from bounds b cross join facts f cross join product_month_costs e
  left join product_month_costs s
    on s.product_id = e.product_id
   and s.month = least((b.month_lo - interval '1 month')::date, f.last)
  where not f.everything and b.month_lo < b.month_hi
    and e.month = least((b.month_hi - interval '1 month')::date, f.last)
),
-- The stale share of each changed month: its two rows' difference (0 past the last month).
stale as (
  select
    c.product_id,
    -(coalesce(e.rows_to_date, 0)                          - coalesce(s.rows_to_date, 0))                          as row_count,
    -(coalesce(e.purchase_cost_usd_to_date, 0)             - coalesce(s.purchase_cost_usd_to_date, 0))             as purchase_cost_usd,
    -(coalesce(e.purchase_cost_usd_count_to_date, 0)       - coalesce(s.purchase_cost_usd_count_to_date, 0))       as purchase_cost_usd_count,
    -(coalesce(e.inbound_freight_usd_to_date, 0)           - coalesce(s.inbound_freight_usd_to_date, 0))           as inbound_freight_usd,
    -(coalesce(e.inbound_freight_usd_count_to_date, 0)     - coalesce(s.inbound_freight_usd_count_to_date, 0))     as inbound_freight_usd_count,
    -(coalesce(e.shipping_to_customer_usd_to_date, 0)      - coalesce(s.shipping_to_customer_usd_to_date, 0))      as shipping_to_customer_usd,
    -(coalesce(e.shipping_to_customer_usd_count_to_date, 0) - coalesce(s.shipping_to_customer_usd_count_to_date, 0)) as shipping_to_customer_usd_count,
    -(coalesce(e.warehouse_fees_usd_to_date, 0)            - coalesce(s.warehouse_fees_usd_to_date, 0))            as warehouse_fees_usd,
    -(coalesce(e.warehouse_fees_usd_count_to_date, 0)      - coalesce(s.warehouse_fees_usd_count_to_date, 0))      as warehouse_fees_usd_count
  from bounds b cross join facts f cross join changed c
  left join product_month_costs e on e.product_id = c.product_id and e.month = least(c.month, f.last)
  left join product_month_costs s on s.product_id = c.product_id and s.month = least((c.month - interval '1 month')::date, f.last)
  where not f.everything
),
-- Daily rows: the days at either end of the range (the date index), the changed months (the
-- primary key, product by product), or, after a change of everything, the whole range.
daily as (
  select d.* from bounds b cross join facts f cross join product_daily_costs d
  where f.everything and d.cost_date >= b.first_day and d.cost_date < b.end_day
  union all
  select d.* from bounds b cross join facts f cross join product_daily_costs d
  where not f.everything and d.cost_date >= b.first_day and d.cost_date < least(b.month_lo, b.end_day)
  union all
  select d.* from bounds b cross join facts f cross join product_daily_costs d
  where not f.everything and d.cost_date >= greatest(b.month_hi, b.month_lo) and d.cost_date < b.end_day
  union all
  select d.* from bounds b cross join facts f cross join changed c
  join product_daily_costs d on d.product_id = c.product_id and d.cost_date >= c.month and d.cost_date < (c.month + interval '1 month')::date
  where not f.everything
),
days as (
  select
    d.product_id, count(*) as row_count,
    cost_total(nullif(d.purchase_cost_usd, 'NaN'))        as purchase_cost_usd,        count(nullif(d.purchase_cost_usd, 'NaN'))        as purchase_cost_usd_count,
    cost_total(nullif(d.inbound_freight_usd, 'NaN'))      as inbound_freight_usd,      count(nullif(d.inbound_freight_usd, 'NaN'))      as inbound_freight_usd_count,
    cost_total(nullif(d.shipping_to_customer_usd, 'NaN')) as shipping_to_customer_usd, count(nullif(d.shipping_to_customer_usd, 'NaN')) as shipping_to_customer_usd_count,
    cost_total(nullif(d.warehouse_fees_usd, 'NaN'))       as warehouse_fees_usd,       count(nullif(d.warehouse_fees_usd, 'NaN'))       as warehouse_fees_usd_count
  from daily d
  group by d.product_id
),
-- Everything but the whole months, per product: small when the range is whole months and
-- the log names none of them.
other_parts as (
  select
    product_id, sum(row_count) as row_count,
    cost_total(purchase_cost_usd)        as purchase_cost_usd,        sum(purchase_cost_usd_count)        as purchase_cost_usd_count,
    cost_total(inbound_freight_usd)      as inbound_freight_usd,      sum(inbound_freight_usd_count)      as inbound_freight_usd_count,
    cost_total(shipping_to_customer_usd) as shipping_to_customer_usd, sum(shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
    cost_total(warehouse_fees_usd)       as warehouse_fees_usd,       sum(warehouse_fees_usd_count)       as warehouse_fees_usd_count
  from (select * from stale union all select * from days) x
  group by product_id
),
totals as (
  -- A join, not a union and a GROUP BY: the whole months are one row per product already.
  select
    coalesce(w.product_id, o.product_id) as product_id,
    coalesce(w.row_count, 0) + coalesce(o.row_count, 0)                                           as row_count,
    coalesce(w.purchase_cost_usd, 0) + coalesce(o.purchase_cost_usd, 0)                           as purchase_cost_usd,
    coalesce(w.purchase_cost_usd_count, 0) + coalesce(o.purchase_cost_usd_count, 0)               as purchase_cost_usd_count,
    coalesce(w.inbound_freight_usd, 0) + coalesce(o.inbound_freight_usd, 0)                       as inbound_freight_usd,
    coalesce(w.inbound_freight_usd_count, 0) + coalesce(o.inbound_freight_usd_count, 0)           as inbound_freight_usd_count,
    coalesce(w.shipping_to_customer_usd, 0) + coalesce(o.shipping_to_customer_usd, 0)             as shipping_to_customer_usd,
    coalesce(w.shipping_to_customer_usd_count, 0) + coalesce(o.shipping_to_customer_usd_count, 0) as shipping_to_customer_usd_count,
    coalesce(w.warehouse_fees_usd, 0) + coalesce(o.warehouse_fees_usd, 0)                         as warehouse_fees_usd,
    coalesce(w.warehouse_fees_usd_count, 0) + coalesce(o.warehouse_fees_usd_count, 0)             as warehouse_fees_usd_count
  from whole_months w
  full join other_parts o on o.product_id = w.product_id
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
where t.row_count > 0
  and ($3::text = 'all' or p.is_sample = ($3::text = 'sample'))
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
