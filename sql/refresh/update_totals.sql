-- The totals to date of every product the log names, from its first changed month on (the
-- months of refresh_grid, sql/refresh/create_grid.sql): each changed month's own totals
-- recomputed from its daily rows (through the primary key), every other month's taken from
-- the old rows (the difference of two), then added up again from the total before the
-- first changed month. Rows that exist are updated in place and new ones inserted (readers
-- keep the old rows until the refresh commits); a row whose totals hold no daily row says
-- what a missing row says, so it is deleted (a product whose earliest rows, or all, were
-- deleted). An UPDATE by key, not INSERT .. ON CONFLICT: a third faster for the 345,000
-- rows a correction of an old month of every product moves.
with changed as (select product_id, month from refresh_changed),
firsts as (select product_id, min(month) as first_month from refresh_grid group by 1),
fresh as (
  select
    c.product_id, c.month, count(d.product_id) as row_count,
    coalesce(sum(nullif(d.purchase_cost_usd, 'NaN')), 0)        as pc, count(nullif(d.purchase_cost_usd, 'NaN'))        as pcn,
    coalesce(sum(nullif(d.inbound_freight_usd, 'NaN')), 0)      as fr, count(nullif(d.inbound_freight_usd, 'NaN'))      as frn,
    coalesce(sum(nullif(d.shipping_to_customer_usd, 'NaN')), 0) as sh, count(nullif(d.shipping_to_customer_usd, 'NaN')) as shn,
    coalesce(sum(nullif(d.warehouse_fees_usd, 'NaN')), 0)       as wf, count(nullif(d.warehouse_fees_usd, 'NaN'))       as wfn
  from changed c
  left join product_daily_costs d
    on d.product_id = c.product_id and d.cost_date >= c.month and d.cost_date < (c.month + interval '1 month')::date
  group by 1, 2
),
own as (
  -- Each month's own totals: recomputed where the log names it, else the old rows' difference.
  select
    g.product_id, g.month,
    coalesce(fr.row_count, o.rows_to_date - coalesce(op.rows_to_date, 0), 0) as row_count,
    coalesce(fr.pc,  o.purchase_cost_usd_to_date - coalesce(op.purchase_cost_usd_to_date, 0), 0)                         as pc,
    coalesce(fr.pcn, o.purchase_cost_usd_count_to_date - coalesce(op.purchase_cost_usd_count_to_date, 0), 0)             as pcn,
    coalesce(fr.fr,  o.inbound_freight_usd_to_date - coalesce(op.inbound_freight_usd_to_date, 0), 0)                     as fr,
    coalesce(fr.frn, o.inbound_freight_usd_count_to_date - coalesce(op.inbound_freight_usd_count_to_date, 0), 0)         as frn,
    coalesce(fr.sh,  o.shipping_to_customer_usd_to_date - coalesce(op.shipping_to_customer_usd_to_date, 0), 0)           as sh,
    coalesce(fr.shn, o.shipping_to_customer_usd_count_to_date - coalesce(op.shipping_to_customer_usd_count_to_date, 0), 0) as shn,
    coalesce(fr.wf,  o.warehouse_fees_usd_to_date - coalesce(op.warehouse_fees_usd_to_date, 0), 0)                       as wf,
    coalesce(fr.wfn, o.warehouse_fees_usd_count_to_date - coalesce(op.warehouse_fees_usd_count_to_date, 0), 0)           as wfn
  from refresh_grid g
  left join fresh fr on fr.product_id = g.product_id and fr.month = g.month
  left join product_month_costs o on o.product_id = g.product_id and o.month = g.month
  left join product_month_costs op on op.product_id = g.product_id and op.month = (g.month - interval '1 month')::date
),
before as (
  -- The totals through the month before the first changed one (none: nothing before).
  select
    f.product_id,
    coalesce(b.rows_to_date, 0) as row_count,
    coalesce(b.purchase_cost_usd_to_date, 0) as pc,        coalesce(b.purchase_cost_usd_count_to_date, 0) as pcn,
    coalesce(b.inbound_freight_usd_to_date, 0) as fr,      coalesce(b.inbound_freight_usd_count_to_date, 0) as frn,
    coalesce(b.shipping_to_customer_usd_to_date, 0) as sh, coalesce(b.shipping_to_customer_usd_count_to_date, 0) as shn,
    coalesce(b.warehouse_fees_usd_to_date, 0) as wf,       coalesce(b.warehouse_fees_usd_count_to_date, 0) as wfn
  from firsts f
  left join product_month_costs b on b.product_id = f.product_id and b.month = (f.first_month - interval '1 month')::date
),
computed as materialized (
  select
    o.month, o.product_id,
    b.row_count + sum(o.row_count) over w as rows_to_date,
    b.pc + sum(o.pc) over w as pc, b.pcn + sum(o.pcn) over w as pcn,
    b.fr + sum(o.fr) over w as fr, b.frn + sum(o.frn) over w as frn,
    b.sh + sum(o.sh) over w as sh, b.shn + sum(o.shn) over w as shn,
    b.wf + sum(o.wf) over w as wf, b.wfn + sum(o.wfn) over w as wfn
  from own o
  join before b on b.product_id = o.product_id
  window w as (partition by o.product_id order by o.month)
),
updated as (
  update product_month_costs t set
    rows_to_date                           = c.rows_to_date,
    purchase_cost_usd_to_date              = c.pc,
    purchase_cost_usd_count_to_date        = c.pcn,
    inbound_freight_usd_to_date            = c.fr,
    inbound_freight_usd_count_to_date      = c.frn,
    shipping_to_customer_usd_to_date       = c.sh,
    shipping_to_customer_usd_count_to_date = c.shn,
    warehouse_fees_usd_to_date             = c.wf,
    warehouse_fees_usd_count_to_date       = c.wfn
  from computed c
  where t.month = c.month and t.product_id = c.product_id and c.rows_to_date > 0
  returning t.month, t.product_id
),
emptied as (
  delete from product_month_costs t
  using computed c
  where t.month = c.month and t.product_id = c.product_id and c.rows_to_date = 0
)
insert into product_month_costs
select c.month, c.product_id, c.rows_to_date, c.pc, c.pcn, c.fr, c.frn, c.sh, c.shn, c.wf, c.wfn
from computed c
where c.rows_to_date > 0
  and not exists (select 1 from updated u where u.month = c.month and u.product_id = c.product_id)
order by 1, 2
