-- Renders the JSON answers of one calendar period, for the three segments at once, exactly as
-- the service writes the rows of sql/queries/product_costs.sql for it: the same fields,
-- order, escaping (to_json of a string, as JSON.stringify), and trim_scale'd decimals; in
-- chunks of 2,000 rows, every chunk but the first starting with a comma. A segment without
-- rows gets one empty chunk (the answer []).
--   $1 period ('month', 'quarter', 'year')   $2 period start (date)
insert into product_cost_answers (period, period_start, segment, chunk, rows, body)
with bounds as (
  select
    $2::date as period_start,
    ($2::date + case $1::text when 'month' then interval '1 month' when 'quarter' then interval '3 months' else interval '1 year' end
              - interval '1 month')::date as last_month
),
-- Per product: the totals through the period's last month less the totals before its first.
totals as (
  select
    e.product_id,
    e.rows_before + bit_count(e.days::bit(32)) - coalesce(s.rows_before, 0) as row_count,
    e.purchase_cost_usd_before + coalesce(e.purchase_cost_usd[cardinality(e.purchase_cost_usd)], 0) - coalesce(s.purchase_cost_usd_before, 0) as pc,
    e.purchase_cost_usd_count_before + bit_count(e.purchase_cost_usd_days::bit(32)) - coalesce(s.purchase_cost_usd_count_before, 0) as pcn,
    e.inbound_freight_usd_before + coalesce(e.inbound_freight_usd[cardinality(e.inbound_freight_usd)], 0) - coalesce(s.inbound_freight_usd_before, 0) as fr,
    e.inbound_freight_usd_count_before + bit_count(e.inbound_freight_usd_days::bit(32)) - coalesce(s.inbound_freight_usd_count_before, 0) as frn,
    e.shipping_to_customer_usd_before + coalesce(e.shipping_to_customer_usd[cardinality(e.shipping_to_customer_usd)], 0) - coalesce(s.shipping_to_customer_usd_before, 0) as sh,
    e.shipping_to_customer_usd_count_before + bit_count(e.shipping_to_customer_usd_days::bit(32)) - coalesce(s.shipping_to_customer_usd_count_before, 0) as shn,
    e.warehouse_fees_usd_before + coalesce(e.warehouse_fees_usd[cardinality(e.warehouse_fees_usd)], 0) - coalesce(s.warehouse_fees_usd_before, 0) as wf,
    e.warehouse_fees_usd_count_before + bit_count(e.warehouse_fees_usd_days::bit(32)) - coalesce(s.warehouse_fees_usd_count_before, 0) as wfn
  from bounds b cross join product_cost_months e
  left join product_cost_months s on s.product_id = e.product_id and s.month = b.period_start
  where e.month = b.last_month
),
rows as materialized (
  select
    p.is_sample,
    row_number() over (order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id) - 1 as n_all,
    row_number() over (partition by p.is_sample order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id) - 1 as n_own,
    '{"erp_product_id":' || coalesce(p.erp_product_id::text, 'null')
      || ',"erp_sku":' || coalesce(to_json(p.erp_sku)::text, 'null')
      || ',"product_name":' || coalesce(to_json(p.product_name)::text, 'null')
      || ',"purchase_cost_usd":' || coalesce(trim_scale(case when t.pcn > 0 then t.pc end)::text, 'null')
      || ',"inbound_freight_usd":' || coalesce(trim_scale(case when t.frn > 0 then t.fr end)::text, 'null')
      || ',"shipping_to_customer_usd":' || coalesce(trim_scale(case when t.shn > 0 then t.sh end)::text, 'null')
      || ',"warehouse_fees_usd":' || coalesce(trim_scale(case when t.wfn > 0 then t.wf end)::text, 'null')
      || '}' as json
  from totals t
  join products p on p.product_id = t.product_id
  where t.row_count > 0
),
-- Each row in the answer of 'all', and in that of its own segment.
placed as (
  select 'all' as segment, n_all as n, json from rows
  union all
  select case when is_sample then 'sample' else 'normal' end, n_own, json from rows
),
chunks as (
  select segment, n / 2000 as chunk, count(*)::int as rows, case when n / 2000 = 0 then '' else ',' end || string_agg(json, ',' order by n) as body
  from placed
  group by 1, 2
)
select $1::text, $2::date, s.segment, coalesce(c.chunk, 0), coalesce(c.rows, 0), coalesce(c.body, '')
from (values ('normal'), ('sample'), ('all')) as s(segment)
left join chunks c on c.segment = s.segment
