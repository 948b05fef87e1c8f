-- A rebuild's step: every month of the products $1 through $2, computed straight from their
-- daily rows in the window of months, $4 through $3 (migration 0013: a row outside it is read
-- as it is, never folded; the rebuild emptied the months first), in
-- one pass over those rows in key order: per (product, month) the bitmasks of the days with a
-- row and with each amount's value (bit d-1 for day d; NaN and null are no value) and each
-- amount's running sum at every day with a row; every month from the product's first through
-- $3, a month without rows carrying the totals; and per month the totals before it (from the
-- window's first month). Joins hash (the refresh runs with nested loops off).
--   $1 first product id   $2 last product id   $3 the window's last month (date)   $4 its first (date)
insert into product_cost_months
with daily as (
  select
    d.product_id, date_trunc('month', d.cost_date::timestamp)::date as month, d.cost_date,
    extract(day from d.cost_date)::int - 1 as bit,
    nullif(d.purchase_cost_usd, 'NaN') as pc, nullif(d.inbound_freight_usd, 'NaN') as fr,
    nullif(d.shipping_to_customer_usd, 'NaN') as sh, nullif(d.warehouse_fees_usd, 'NaN') as wf
  from product_daily_costs d
  where d.product_id between $1::bigint and $2::bigint and d.cost_date >= $4::date and d.cost_date < ($3::date + interval '1 month')::date
),
running as (
  select product_id, month, bit, pc, fr, sh, wf,
    sum(coalesce(pc, 0)) over w as pc_sum, sum(coalesce(fr, 0)) over w as fr_sum,
    sum(coalesce(sh, 0)) over w as sh_sum, sum(coalesce(wf, 0)) over w as wf_sum
  from daily
  window w as (partition by product_id, month order by cost_date rows unbounded preceding)
),
months as materialized (
  -- In day order: the order `running` comes in, the window's.
  select product_id, month, count(*)::int as n,
    bit_or(1 << bit) as days,
    bit_or(case when pc is null then 0 else 1 << bit end) as pc_days, bit_or(case when fr is null then 0 else 1 << bit end) as fr_days,
    bit_or(case when sh is null then 0 else 1 << bit end) as sh_days, bit_or(case when wf is null then 0 else 1 << bit end) as wf_days,
    count(pc)::int as pcn, count(fr)::int as frn, count(sh)::int as shn, count(wf)::int as wfn,
    array_agg(pc_sum) as pc, array_agg(fr_sum) as fr, array_agg(sh_sum) as sh, array_agg(wf_sum) as wf
  from running
  group by product_id, month
),
dense as (
  -- Every month from the product's first through $3.
  select f.product_id, g.month::date as month
  from (select product_id, min(month) as first_month from months group by product_id) f
  cross join lateral generate_series(f.first_month, $3::date, interval '1 month') as g(month)
),
rows as (
  select d.product_id, d.month,
    coalesce(m.n, 0) as n, coalesce(m.days, 0) as days,
    coalesce(m.pc_days, 0) as pc_days, coalesce(m.fr_days, 0) as fr_days, coalesce(m.sh_days, 0) as sh_days, coalesce(m.wf_days, 0) as wf_days,
    coalesce(m.pcn, 0) as pcn, coalesce(m.frn, 0) as frn, coalesce(m.shn, 0) as shn, coalesce(m.wfn, 0) as wfn,
    coalesce(m.pc, '{}') as pc, coalesce(m.fr, '{}') as fr, coalesce(m.sh, '{}') as sh, coalesce(m.wf, '{}') as wf
  from dense d
  left join months m on m.product_id = d.product_id and m.month = d.month
)
select month, product_id,
  coalesce(sum(n) over b, 0)::int,
  coalesce(sum(coalesce(pc[cardinality(pc)], 0)) over b, 0), coalesce(sum(pcn) over b, 0)::int,
  coalesce(sum(coalesce(fr[cardinality(fr)], 0)) over b, 0), coalesce(sum(frn) over b, 0)::int,
  coalesce(sum(coalesce(sh[cardinality(sh)], 0)) over b, 0), coalesce(sum(shn) over b, 0)::int,
  coalesce(sum(coalesce(wf[cardinality(wf)], 0)) over b, 0), coalesce(sum(wfn) over b, 0)::int,
  days, pc_days, fr_days, sh_days, wf_days, pc, fr, sh, wf
from rows
window b as (partition by product_id order by month rows between unbounded preceding and 1 preceding)
order by month, product_id
