-- An edge: every product's totals through day $1 over the rollup's window of months (issue
-- 53's design: a range is the edge through its last day less the edge through the day before
-- its first, plus its days outside the window, product_costs_outside.sql; src/reads/edges/edges.ts).
--
-- Parameters: $1 the day (date).
-- Returns one row: per product with anything through $1 in the window, as arrays by position:
-- product_id, n (daily rows), and per amount its sum (numeric, NaN not counted) and how many
-- values it has (pc, pcn, fr, frn, sh, shn, wf, wfn): the
-- month of $1 (the rollup's last month whole when $1 is past it) by its constant key, plus each
-- note of a window month through $1 waiting for the refresh (all of a note of an earlier month).
-- A day before the window: no row. The caller reads the rollup only while no note of
-- everything waits and a window is recorded (range_facts.sql; else the daily rows).
with bounds as not materialized (
  select
    date_trunc('month', $1::date::timestamp)::date            as month,
    ((1::bigint << extract(day from $1::date)::int) - 1)::int as through
),
facts as not materialized (
  select
    (select max(month) from product_cost_months)                                   as last,
    (select window_first from product_cost_refreshes)                              as window_first,
    (select (window_last + interval '1 month')::date from product_cost_refreshes) as window_after
),
folded as (
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
    -- OFFSET 0 keeps this a subquery, so each k is computed once per row, not once per use.
    select m.*, b.through as mask, bit_count((m.days & b.through)::bit(32))::int as k
    from bounds b cross join facts f
    join product_cost_months m on m.month = b.month
    where b.month >= f.window_first and b.month <= f.last
    union all
    select m.*, -1 as mask, bit_count(m.days::bit(32))::int as k
    from bounds b cross join facts f
    join product_cost_months m on m.month = f.last
    where b.month > f.last and f.last >= f.window_first
    offset 0
  ) m
),
noted as (
  select
    c.product_id,
    sum(coalesce(c.rows[c.k], 0))                      as n,
    sum(coalesce(c.purchase_cost_usd[c.k], 0))         as pc,
    sum(coalesce(c.purchase_cost_usd_count[c.k], 0))   as pcn,
    sum(coalesce(c.inbound_freight_usd[c.k], 0))       as fr,
    sum(coalesce(c.inbound_freight_usd_count[c.k], 0)) as frn,
    sum(coalesce(c.shipping_to_customer_usd[c.k], 0))  as sh,
    sum(coalesce(c.shipping_to_customer_usd_count[c.k], 0)) as shn,
    sum(coalesce(c.warehouse_fees_usd[c.k], 0))        as wf,
    sum(coalesce(c.warehouse_fees_usd_count[c.k], 0))  as wfn
  from (
    select c.*,
      case when c.month = b.month then bit_count((c.days & b.through)::bit(32))::int else cardinality(c.rows) end as k
    from bounds b cross join facts f
    join product_cost_deltas c on c.month <= b.month
    where c.product_id is not null and c.month >= f.window_first and c.month < f.window_after
    offset 0
  ) c
  group by c.product_id
)
-- One row of arrays, not a row per product: PostgreSQL sends ten values, not ten per product,
-- and the service parses them in one pass (src/reads/edges/edges.ts), a third of the time of a row per
-- product. Every aggregate of one plain aggregation takes its rows in the same order: the
-- arrays' elements correspond by position. No row in the window: null arrays.
select
  array_agg(coalesce(f.product_id, w.product_id))::text as product_id,
  array_agg(coalesce(f.n + w.n, f.n, w.n))::text as n,
  array_agg(coalesce(f.pc + w.pc, f.pc, w.pc))::text as pc, array_agg(coalesce(f.pcn + w.pcn, f.pcn, w.pcn))::text as pcn,
  array_agg(coalesce(f.fr + w.fr, f.fr, w.fr))::text as fr, array_agg(coalesce(f.frn + w.frn, f.frn, w.frn))::text as frn,
  array_agg(coalesce(f.sh + w.sh, f.sh, w.sh))::text as sh, array_agg(coalesce(f.shn + w.shn, f.shn, w.shn))::text as shn,
  array_agg(coalesce(f.wf + w.wf, f.wf, w.wf))::text as wf, array_agg(coalesce(f.wfn + w.wfn, f.wfn, w.wfn))::text as wfn
from folded f
full join noted w on w.product_id = f.product_id
