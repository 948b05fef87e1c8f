-- A copy of October's month rows (product_cost_months_2026_10) in int8 micro-units: the narrow
-- layout of issue 53's design, made beside the rollup for a measurement (run.sh drops it).
drop table if exists narrow_2026_10;
create table narrow_2026_10 as
select month, product_id, rows_before,
  (purchase_cost_usd_before * 1000000)::int8 as pc_b, purchase_cost_usd_count_before as pcn_b,
  (inbound_freight_usd_before * 1000000)::int8 as fr_b, inbound_freight_usd_count_before as frn_b,
  (shipping_to_customer_usd_before * 1000000)::int8 as sh_b, shipping_to_customer_usd_count_before as shn_b,
  (warehouse_fees_usd_before * 1000000)::int8 as wf_b, warehouse_fees_usd_count_before as wfn_b,
  days, purchase_cost_usd_days as pc_d, inbound_freight_usd_days as fr_d, shipping_to_customer_usd_days as sh_d, warehouse_fees_usd_days as wf_d,
  (select array_agg((x * 1000000)::int8) from unnest(purchase_cost_usd) x) as pc,
  (select array_agg((x * 1000000)::int8) from unnest(inbound_freight_usd) x) as fr,
  (select array_agg((x * 1000000)::int8) from unnest(shipping_to_customer_usd) x) as sh,
  (select array_agg((x * 1000000)::int8) from unnest(warehouse_fees_usd) x) as wf
from product_cost_months_2026_10;
alter table narrow_2026_10 add primary key (month, product_id);
vacuum analyze narrow_2026_10;
select pg_size_pretty(pg_total_relation_size('narrow_2026_10')), pg_size_pretty(pg_total_relation_size('product_cost_months_2026_10'));
