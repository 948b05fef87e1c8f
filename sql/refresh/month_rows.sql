-- One month of every product a step writes (refresh_products, from its first changed month),
-- computed into refresh_month: each product's totals before the month (carried from the month
-- before; where the product starts, its row's own), and its days:
-- computed again where a note names the pair (refresh_changed), else as its row holds them.
-- A named pair keeps its days before the first day a note names, as they were, and computes
-- the rest from its daily rows (the ETL's daily write reads one day of daily rows, not the
-- month's). Days: bitmasks of the days with a row and with each amount's value (bit d-1 for
-- day d; NaN and null are no value), and each amount's running sum at every day with a row.
-- Plans: the month's rows are found by key, product by product, for a sparse step, and the
-- step's ids read in key order and hashed for a dense one; the named pairs' daily rows by key (a lateral subquery per pair) or, for many pairs ($3),
-- by date; the refresh runs this with nested loops off, so every other join hashes.
--   $1 the month (its first day)   $2 the first day of the month after
--   $3 read the pairs' daily rows by date, from $4 (boolean)   $4 the earliest first named day (date)
--   $5 dense (boolean)   $6 the step's first product id   $7 its last
insert into refresh_month
with found as (
  -- Each product written this month (from its first changed month on), what is carried before
  -- it (carried: null when it starts here), its first named day (null: the pair is not named)
  -- and its row of the month (k.*: nulls when none), found as the step was told ($5): few
  -- products, each row by its key (a lateral subquery per product, an index probe whatever the
  -- statistics say); many (dense in the step's ids, $6 through $7), the month's rows of those
  -- ids read in key order and hashed.
  select p.product_id as id, c.product_id is not null as carried, c.n, c.pc, c.pcn, c.fr, c.frn, c.sh, c.shn, c.wf, c.wfn, ch.first_day, k.*
  from refresh_products p
  left join refresh_carry c on c.product_id = p.product_id
  left join refresh_changed ch on ch.month = $1::date and ch.product_id = p.product_id
  left join lateral (select * from product_cost_months k where k.month = $1::date and k.product_id = p.product_id offset 0) k on true
  where not $5::boolean and p.first_month <= $1::date
  union all
  select p.product_id, c.product_id is not null, c.n, c.pc, c.pcn, c.fr, c.frn, c.sh, c.shn, c.wf, c.wfn, ch.first_day, k.*
  from refresh_products p
  left join refresh_carry c on c.product_id = p.product_id
  left join refresh_changed ch on ch.month = $1::date and ch.product_id = p.product_id
  left join product_cost_months k on k.month = $1::date and k.product_id between $6::bigint and $7::bigint and k.product_id = p.product_id
  where $5::boolean and p.first_month <= $1::date
),
old as materialized (
  -- What each row holds: unnamed, its masks and the month's own sums (the last running sums);
  -- named, its masks, running sums and last running sum before the first named day.
  select
    f.id as product_id, f.first_day,
    -- The totals before the month: carried from the month before, or, where the product starts
    -- here, its row's (the months before it are as they were), else nothing.
    case when f.carried then f.n else coalesce(f.rows_before, 0) end as n,
    case when f.carried then f.pc else coalesce(f.purchase_cost_usd_before, 0) end as pc,
    case when f.carried then f.pcn else coalesce(f.purchase_cost_usd_count_before, 0) end as pcn,
    case when f.carried then f.fr else coalesce(f.inbound_freight_usd_before, 0) end as fr,
    case when f.carried then f.frn else coalesce(f.inbound_freight_usd_count_before, 0) end as frn,
    case when f.carried then f.sh else coalesce(f.shipping_to_customer_usd_before, 0) end as sh,
    case when f.carried then f.shn else coalesce(f.shipping_to_customer_usd_count_before, 0) end as shn,
    case when f.carried then f.wf else coalesce(f.warehouse_fees_usd_before, 0) end as wf,
    case when f.carried then f.wfn else coalesce(f.warehouse_fees_usd_count_before, 0) end as wfn,
    f.product_id is not null as existed,
    coalesce(f.days & m.mask, 0) as days, coalesce(f.purchase_cost_usd_days & m.mask, 0) as pc_days,
    coalesce(f.inbound_freight_usd_days & m.mask, 0) as fr_days, coalesce(f.shipping_to_customer_usd_days & m.mask, 0) as sh_days,
    coalesce(f.warehouse_fees_usd_days & m.mask, 0) as wf_days,
    -- The running sums kept (named pairs only; all of them when the first named day comes
    -- after every day of the row, as the ETL's daily write does: not copied by a slice).
    case when f.first_day is null then null else coalesce(case when m.k = cardinality(f.purchase_cost_usd) then f.purchase_cost_usd else f.purchase_cost_usd[1:m.k] end, '{}') end as pc_kept,
    case when f.first_day is null then null else coalesce(case when m.k = cardinality(f.inbound_freight_usd) then f.inbound_freight_usd else f.inbound_freight_usd[1:m.k] end, '{}') end as fr_kept,
    case when f.first_day is null then null else coalesce(case when m.k = cardinality(f.shipping_to_customer_usd) then f.shipping_to_customer_usd else f.shipping_to_customer_usd[1:m.k] end, '{}') end as sh_kept,
    case when f.first_day is null then null else coalesce(case when m.k = cardinality(f.warehouse_fees_usd) then f.warehouse_fees_usd else f.warehouse_fees_usd[1:m.k] end, '{}') end as wf_kept,
    coalesce(f.purchase_cost_usd[m.k], 0) as pc_at, coalesce(f.inbound_freight_usd[m.k], 0) as fr_at,
    coalesce(f.shipping_to_customer_usd[m.k], 0) as sh_at, coalesce(f.warehouse_fees_usd[m.k], 0) as wf_at
  from found f
  cross join lateral (
    -- The days kept: all of them for an unnamed pair, those before the first named day else.
    select mask.bits as mask, coalesce(bit_count((f.days & mask.bits)::bit(32))::int, 0) as k
    from (select case when f.first_day is null then -1 else ((1::bigint << (f.first_day - 1)) - 1)::int end as bits) mask
  ) m
),
daily as (
  -- The named pairs' daily rows from their first named day, with the running sums they go on from.
  select o.product_id, o.pc_at, o.fr_at, o.sh_at, o.wf_at, d.cost_date,
    d.purchase_cost_usd, d.inbound_freight_usd, d.shipping_to_customer_usd, d.warehouse_fees_usd
  from old o
  join product_daily_costs d on d.product_id = o.product_id
  where $3::boolean and o.first_day is not null
    and d.cost_date >= $4::date and d.cost_date < $2::date and d.cost_date >= $1::date + o.first_day - 1
  union all
  select o.product_id, o.pc_at, o.fr_at, o.sh_at, o.wf_at, d.cost_date,
    d.purchase_cost_usd, d.inbound_freight_usd, d.shipping_to_customer_usd, d.warehouse_fees_usd
  from old o
  cross join lateral (
    select d.cost_date, d.purchase_cost_usd, d.inbound_freight_usd, d.shipping_to_customer_usd, d.warehouse_fees_usd
    from product_daily_costs d
    where d.product_id = o.product_id and d.cost_date >= $1::date + o.first_day - 1 and d.cost_date < $2::date
    offset 0
  ) d
  where not $3::boolean and o.first_day is not null
),
running as (
  select
    product_id, cost_date, extract(day from cost_date)::int - 1 as bit,
    nullif(purchase_cost_usd, 'NaN') as pc, nullif(inbound_freight_usd, 'NaN') as fr,
    nullif(shipping_to_customer_usd, 'NaN') as sh, nullif(warehouse_fees_usd, 'NaN') as wf,
    pc_at + sum(coalesce(nullif(purchase_cost_usd, 'NaN'), 0)) over w        as pc_sum,
    fr_at + sum(coalesce(nullif(inbound_freight_usd, 'NaN'), 0)) over w      as fr_sum,
    sh_at + sum(coalesce(nullif(shipping_to_customer_usd, 'NaN'), 0)) over w as sh_sum,
    wf_at + sum(coalesce(nullif(warehouse_fees_usd, 'NaN'), 0)) over w       as wf_sum
  from daily
  window w as (partition by product_id order by cost_date rows unbounded preceding)
),
tail as (
  select
    product_id,
    bit_or(1 << bit) as days,
    bit_or(case when pc is null then 0 else 1 << bit end) as pc_days,
    bit_or(case when fr is null then 0 else 1 << bit end) as fr_days,
    bit_or(case when sh is null then 0 else 1 << bit end) as sh_days,
    bit_or(case when wf is null then 0 else 1 << bit end) as wf_days,
    -- In day order: the order `running` comes in, the window's (an ORDER BY here would
    -- sort each product's rows again).
    array_agg(pc_sum) as pc, array_agg(fr_sum) as fr, array_agg(sh_sum) as sh, array_agg(wf_sum) as wf
  from running
  group by product_id
)
select
  o.product_id, o.existed,
  o.n, o.pc, o.pcn, o.fr, o.frn, o.sh, o.shn, o.wf, o.wfn,
  o.days | coalesce(t.days, 0), o.pc_days | coalesce(t.pc_days, 0), o.fr_days | coalesce(t.fr_days, 0),
  o.sh_days | coalesce(t.sh_days, 0), o.wf_days | coalesce(t.wf_days, 0),
  -- Named: the days kept, then the days computed. Unnamed: the row's own (null).
  case when o.first_day is not null then o.pc_kept || coalesce(t.pc, '{}') end,
  case when o.first_day is not null then o.fr_kept || coalesce(t.fr, '{}') end,
  case when o.first_day is not null then o.sh_kept || coalesce(t.sh, '{}') end,
  case when o.first_day is not null then o.wf_kept || coalesce(t.wf, '{}') end,
  coalesce(t.pc[cardinality(t.pc)], o.pc_at), coalesce(t.fr[cardinality(t.fr)], o.fr_at),
  coalesce(t.sh[cardinality(t.sh)], o.sh_at), coalesce(t.wf[cardinality(t.wf)], o.wf_at)
from old o
left join tail t on t.product_id = o.product_id
