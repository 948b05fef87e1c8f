-- Writes one month of every product the refresh changes (refresh_products), months in date
-- order, after start_month.sql: each product's row gets the totals carried before it
-- (refresh_carry), and its days: computed from its daily rows where the log names the pair
-- (refresh_changed), else as kept; and refresh_carry moves past the month. A row that
-- exists is updated in place (readers keep the old row until the refresh commits), a new one
-- inserted; a row with nothing before and no day says what a missing row says, so it is
-- deleted (a product whose earliest rows, or all, were deleted).
-- Days: bitmasks of the days with a row and with each amount's value (bit d-1 for day d; NaN
-- and null are no value), and each amount's running sum at every day with a row.
--   $1 the month (its first day)   $2 the first day of the month after
with running as (
  select
    c.product_id, d.cost_date, extract(day from d.cost_date)::int - 1 as bit,
    nullif(d.purchase_cost_usd, 'NaN') as pc, nullif(d.inbound_freight_usd, 'NaN') as fr,
    nullif(d.shipping_to_customer_usd, 'NaN') as sh, nullif(d.warehouse_fees_usd, 'NaN') as wf,
    sum(coalesce(nullif(d.purchase_cost_usd, 'NaN'), 0)) over w        as pc_sum,
    sum(coalesce(nullif(d.inbound_freight_usd, 'NaN'), 0)) over w      as fr_sum,
    sum(coalesce(nullif(d.shipping_to_customer_usd, 'NaN'), 0)) over w as sh_sum,
    sum(coalesce(nullif(d.warehouse_fees_usd, 'NaN'), 0)) over w       as wf_sum
  from refresh_changed c
  left join product_daily_costs d
    on d.product_id = c.product_id and d.cost_date >= $1::date and d.cost_date < $2::date
  where c.month = $1::date
  window w as (partition by c.product_id order by d.cost_date rows unbounded preceding)
),
fresh as (
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
month_rows as materialized (
  select
    c.product_id, c.n as rows_before, c.pc as pc_before, c.pcn as pcn_before, c.fr as fr_before, c.frn as frn_before,
    c.sh as sh_before, c.shn as shn_before, c.wf as wf_before, c.wfn as wfn_before,
    coalesce(f.days, k.days, 0) as days,
    coalesce(f.pc_days, k.purchase_cost_usd_days, 0) as pc_days,
    coalesce(f.fr_days, k.inbound_freight_usd_days, 0) as fr_days,
    coalesce(f.sh_days, k.shipping_to_customer_usd_days, 0) as sh_days,
    coalesce(f.wf_days, k.warehouse_fees_usd_days, 0) as wf_days,
    coalesce(f.pc, k.purchase_cost_usd, '{}') as pc,
    coalesce(f.fr, k.inbound_freight_usd, '{}') as fr,
    coalesce(f.sh, k.shipping_to_customer_usd, '{}') as sh,
    coalesce(f.wf, k.warehouse_fees_usd, '{}') as wf
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
    purchase_cost_usd                     = r.pc,
    inbound_freight_usd                   = r.fr,
    shipping_to_customer_usd              = r.sh,
    warehouse_fees_usd                    = r.wf
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
    r.pc, r.fr, r.sh, r.wf
  from month_rows r
  where (r.rows_before > 0 or r.days <> 0)
    and not exists (select 1 from updated u where u.product_id = r.product_id)
  order by r.product_id
)
-- Past this month: its own totals added to what is carried.
update refresh_carry c set
  n = r.n, pc = r.pc, pcn = r.pcn, fr = r.fr, frn = r.frn, sh = r.sh, shn = r.shn, wf = r.wf, wfn = r.wfn
from (
  select
    r.product_id,
    r.rows_before + bit_count(r.days::bit(32))::int,
    r.pc_before + coalesce(r.pc[cardinality(r.pc)], 0), r.pcn_before + bit_count(r.pc_days::bit(32))::int,
    r.fr_before + coalesce(r.fr[cardinality(r.fr)], 0), r.frn_before + bit_count(r.fr_days::bit(32))::int,
    r.sh_before + coalesce(r.sh[cardinality(r.sh)], 0), r.shn_before + bit_count(r.sh_days::bit(32))::int,
    r.wf_before + coalesce(r.wf[cardinality(r.wf)], 0), r.wfn_before + bit_count(r.wf_days::bit(32))::int
  from month_rows r
) as r(product_id, n, pc, pcn, fr, frn, sh, shn, wf, wfn)
where c.product_id = r.product_id
