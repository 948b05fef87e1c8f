-- Writes one month of every product the refresh changes (refresh_products), months in date
-- order, after start_month.sql: each product's row gets the totals carried before it
-- (refresh_carry), and its days: computed again where the log names the pair
-- (refresh_changed), else as kept; and refresh_carry moves past the month. A row that
-- exists is updated in place (readers keep the old row until the refresh commits), a new one
-- inserted; a row with nothing before and no day says what a missing row says, so it is
-- deleted (a product whose earliest rows, or all, were deleted).
-- Days: bitmasks of the days with a row and with each amount's value (bit d-1 for day d; NaN
-- and null are no value), and each amount's running sum at every day with a row. A changed
-- pair keeps its days before the first day a note names, as they were, and computes the rest
-- from its daily rows: the ETL's daily write reads one day of daily rows, not the month's.
--   $1 the month (its first day)   $2 the first day of the month after
--   $3 the earliest first changed day of the month's pairs (the daily rows read start there)
with kept as (
  -- Per changed pair: what it keeps (the days before its first changed day), and the
  -- running sums there, from which its later days go on.
  select
    c.product_id, c.first_day,
    coalesce(k.days & m.mask, 0) as days,
    coalesce(k.purchase_cost_usd_days & m.mask, 0) as pc_days, coalesce(k.inbound_freight_usd_days & m.mask, 0) as fr_days,
    coalesce(k.shipping_to_customer_usd_days & m.mask, 0) as sh_days, coalesce(k.warehouse_fees_usd_days & m.mask, 0) as wf_days,
    -- (All of them when the change comes after every kept day, as the ETL's daily write
    -- does: the arrays as they are, not copied by a slice.)
    case when m.k = cardinality(k.purchase_cost_usd) then k.purchase_cost_usd else coalesce(k.purchase_cost_usd[1:m.k], '{}') end as pc,
    case when m.k = cardinality(k.inbound_freight_usd) then k.inbound_freight_usd else coalesce(k.inbound_freight_usd[1:m.k], '{}') end as fr,
    case when m.k = cardinality(k.shipping_to_customer_usd) then k.shipping_to_customer_usd else coalesce(k.shipping_to_customer_usd[1:m.k], '{}') end as sh,
    case when m.k = cardinality(k.warehouse_fees_usd) then k.warehouse_fees_usd else coalesce(k.warehouse_fees_usd[1:m.k], '{}') end as wf,
    coalesce(k.purchase_cost_usd[m.k], 0) as pc_at, coalesce(k.inbound_freight_usd[m.k], 0) as fr_at,
    coalesce(k.shipping_to_customer_usd[m.k], 0) as sh_at, coalesce(k.warehouse_fees_usd[m.k], 0) as wf_at
  from refresh_changed c
  left join product_cost_months k on k.month = $1::date and k.product_id = c.product_id
  cross join lateral (
    select ((1::bigint << (c.first_day - 1)) - 1)::int as mask,
           coalesce(bit_count((k.days & ((1::bigint << (c.first_day - 1)) - 1)::int)::bit(32))::int, 0) as k
  ) m
  where c.month = $1::date
),
running as (
  select
    c.product_id, d.cost_date, extract(day from d.cost_date)::int - 1 as bit,
    nullif(d.purchase_cost_usd, 'NaN') as pc, nullif(d.inbound_freight_usd, 'NaN') as fr,
    nullif(d.shipping_to_customer_usd, 'NaN') as sh, nullif(d.warehouse_fees_usd, 'NaN') as wf,
    c.pc_at + sum(coalesce(nullif(d.purchase_cost_usd, 'NaN'), 0)) over w        as pc_sum,
    c.fr_at + sum(coalesce(nullif(d.inbound_freight_usd, 'NaN'), 0)) over w      as fr_sum,
    c.sh_at + sum(coalesce(nullif(d.shipping_to_customer_usd, 'NaN'), 0)) over w as sh_sum,
    c.wf_at + sum(coalesce(nullif(d.warehouse_fees_usd, 'NaN'), 0)) over w       as wf_sum
  from kept c
  left join product_daily_costs d
    on d.product_id = c.product_id and d.cost_date >= $3::date and d.cost_date < $2::date
   and d.cost_date >= $1::date + c.first_day - 1
  window w as (partition by c.product_id order by d.cost_date rows unbounded preceding)
),
tail as (
  select
    product_id,
    coalesce(bit_or(1 << bit), 0) as days,
    coalesce(bit_or(case when pc is null then 0 else 1 << bit end), 0) as pc_days,
    coalesce(bit_or(case when fr is null then 0 else 1 << bit end), 0) as fr_days,
    coalesce(bit_or(case when sh is null then 0 else 1 << bit end), 0) as sh_days,
    coalesce(bit_or(case when wf is null then 0 else 1 << bit end), 0) as wf_days,
    -- In day order: the order `running` comes in, the window's (an ORDER BY here would
    -- sort each product's rows again: a sixth of a rebuild's time).
    coalesce(array_agg(pc_sum) filter (where cost_date is not null), '{}') as pc,
    coalesce(array_agg(fr_sum) filter (where cost_date is not null), '{}') as fr,
    coalesce(array_agg(sh_sum) filter (where cost_date is not null), '{}') as sh,
    coalesce(array_agg(wf_sum) filter (where cost_date is not null), '{}') as wf
  from running
  group by product_id
),
fresh as (
  -- The days kept, then the days computed.
  select
    k.product_id,
    k.days | t.days as days, k.pc_days | t.pc_days as pc_days, k.fr_days | t.fr_days as fr_days,
    k.sh_days | t.sh_days as sh_days, k.wf_days | t.wf_days as wf_days,
    k.pc || t.pc as pc, k.fr || t.fr as fr, k.sh || t.sh as sh, k.wf || t.wf as wf
  from kept k
  join tail t on t.product_id = k.product_id
),
-- Each product's row of the month: the totals carried before it, its masks, its own totals,
-- and its arrays where they were computed again (null: kept as they are; the arrays are
-- most of a row, so a product that only moves past a changed month is not copied).
month_rows as materialized (
  select
    c.product_id, c.n as rows_before, c.pc as pc_before, c.pcn as pcn_before, c.fr as fr_before, c.frn as frn_before,
    c.sh as sh_before, c.shn as shn_before, c.wf as wf_before, c.wfn as wfn_before,
    coalesce(f.days, k.days, 0) as days,
    coalesce(f.pc_days, k.purchase_cost_usd_days, 0) as pc_days,
    coalesce(f.fr_days, k.inbound_freight_usd_days, 0) as fr_days,
    coalesce(f.sh_days, k.shipping_to_customer_usd_days, 0) as sh_days,
    coalesce(f.wf_days, k.warehouse_fees_usd_days, 0) as wf_days,
    f.pc, f.fr, f.sh, f.wf,
    -- The month's own sums: the last running sum of each amount.
    case when f.product_id is null then coalesce(k.purchase_cost_usd[cardinality(k.purchase_cost_usd)], 0) else coalesce(f.pc[cardinality(f.pc)], 0) end as pc_total,
    case when f.product_id is null then coalesce(k.inbound_freight_usd[cardinality(k.inbound_freight_usd)], 0) else coalesce(f.fr[cardinality(f.fr)], 0) end as fr_total,
    case when f.product_id is null then coalesce(k.shipping_to_customer_usd[cardinality(k.shipping_to_customer_usd)], 0) else coalesce(f.sh[cardinality(f.sh)], 0) end as sh_total,
    case when f.product_id is null then coalesce(k.warehouse_fees_usd[cardinality(k.warehouse_fees_usd)], 0) else coalesce(f.wf[cardinality(f.wf)], 0) end as wf_total
  from refresh_carry c
  left join fresh f on f.product_id = c.product_id
  left join product_cost_months k on k.month = $1::date and k.product_id = c.product_id
),
updated as (
  update product_cost_months t set
    rows_before                           = r.rows_before,
    purchase_cost_usd_before              = r.pc_before,
    purchase_cost_usd_count_before        = r.pcn_before,
    inbound_freight_usd_before            = r.fr_before,
    inbound_freight_usd_count_before      = r.frn_before,
    shipping_to_customer_usd_before       = r.sh_before,
    shipping_to_customer_usd_count_before = r.shn_before,
    warehouse_fees_usd_before             = r.wf_before,
    warehouse_fees_usd_count_before       = r.wfn_before,
    days                                  = r.days,
    purchase_cost_usd_days                = r.pc_days,
    inbound_freight_usd_days              = r.fr_days,
    shipping_to_customer_usd_days         = r.sh_days,
    warehouse_fees_usd_days               = r.wf_days,
    purchase_cost_usd                     = coalesce(r.pc, t.purchase_cost_usd),
    inbound_freight_usd                   = coalesce(r.fr, t.inbound_freight_usd),
    shipping_to_customer_usd              = coalesce(r.sh, t.shipping_to_customer_usd),
    warehouse_fees_usd                    = coalesce(r.wf, t.warehouse_fees_usd)
  from month_rows r
  where t.month = $1::date and t.product_id = r.product_id and (r.rows_before > 0 or r.days <> 0)
  returning t.product_id
),
emptied as (
  delete from product_cost_months t
  using month_rows r
  where t.month = $1::date and t.product_id = r.product_id and r.rows_before = 0 and r.days = 0
),
inserted as (
  insert into product_cost_months
  select $1::date, r.product_id, r.rows_before, r.pc_before, r.pcn_before, r.fr_before, r.frn_before,
    r.sh_before, r.shn_before, r.wf_before, r.wfn_before, r.days, r.pc_days, r.fr_days, r.sh_days, r.wf_days,
    coalesce(r.pc, '{}'), coalesce(r.fr, '{}'), coalesce(r.sh, '{}'), coalesce(r.wf, '{}')
  from month_rows r
  where (r.rows_before > 0 or r.days <> 0)
    and not exists (select 1 from updated u where u.product_id = r.product_id)
  order by r.product_id
)
-- Past this month: its own totals added to what is carried.
update refresh_carry c set
  n = r.rows_before + bit_count(r.days::bit(32))::int,
  pc = r.pc_before + r.pc_total, pcn = r.pcn_before + bit_count(r.pc_days::bit(32))::int,
  fr = r.fr_before + r.fr_total, frn = r.frn_before + bit_count(r.fr_days::bit(32))::int,
  sh = r.sh_before + r.sh_total, shn = r.shn_before + bit_count(r.sh_days::bit(32))::int,
  wf = r.wf_before + r.wf_total, wfn = r.wfn_before + bit_count(r.wf_days::bit(32))::int
from month_rows r
where c.product_id = r.product_id
