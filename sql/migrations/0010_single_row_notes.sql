-- A statement that changes one row (the ETL's single-row upsert, insert or delete) notes it
-- without the general query. product_cost_deltas_note (0006) nets the added and removed rows
-- with a join of two unnests, then a window and a grouping per (product, month): right for any
-- statement, and about 50 µs of a single-row upsert's cost for one row. One row added, one
-- removed, or one replaced under the same key has one day: its note is that day's change, the
-- same expressions as 0006's, computed from the two rows directly. Any other statement (more
-- rows, a key changed) takes 0006's query as before. The notes are the same either way:
-- tests/db/single-row-notes.test.ts compares both paths on every case.

-- 0006's function, unchanged, under a new name: every other statement.
alter function product_cost_deltas_note(product_daily_costs[], product_daily_costs[]) rename to product_cost_deltas_note_general;

create function product_cost_deltas_note(added product_daily_costs[], removed product_daily_costs[]) returns void
  language plpgsql security definer set search_path from current
as $fn$
declare
  a product_daily_costs := added[1]; -- null when nothing was added
  r product_daily_costs := removed[1];
begin
  if cardinality(added) <= 1 and cardinality(removed) <= 1
     and (cardinality(added) = 0 or cardinality(removed) = 0 or (a.product_id = r.product_id and a.cost_date = r.cost_date)) then
    insert into product_cost_deltas (
      product_id, month, days, rows,
      purchase_cost_usd, purchase_cost_usd_count, inbound_freight_usd, inbound_freight_usd_count,
      shipping_to_customer_usd, shipping_to_customer_usd_count, warehouse_fees_usd, warehouse_fees_usd_count)
    select product_id, month, 1 << (day - 1), array[n], array[pc], array[pcn], array[fr], array[frn], array[sh], array[shn], array[wf], array[wfn]
    from (
      select
        coalesce(a.product_id, r.product_id) as product_id,
        date_trunc('month', coalesce(a.cost_date, r.cost_date)::timestamp)::date as month,
        extract(day from coalesce(a.cost_date, r.cost_date))::int as day,
        (a.product_id is not null)::int - (r.product_id is not null)::int as n,
        coalesce(nullif(a.purchase_cost_usd, 'NaN'), 0) - coalesce(nullif(r.purchase_cost_usd, 'NaN'), 0) as pc,
        (nullif(a.purchase_cost_usd, 'NaN') is not null)::int - (nullif(r.purchase_cost_usd, 'NaN') is not null)::int as pcn,
        coalesce(nullif(a.inbound_freight_usd, 'NaN'), 0) - coalesce(nullif(r.inbound_freight_usd, 'NaN'), 0) as fr,
        (nullif(a.inbound_freight_usd, 'NaN') is not null)::int - (nullif(r.inbound_freight_usd, 'NaN') is not null)::int as frn,
        coalesce(nullif(a.shipping_to_customer_usd, 'NaN'), 0) - coalesce(nullif(r.shipping_to_customer_usd, 'NaN'), 0) as sh,
        (nullif(a.shipping_to_customer_usd, 'NaN') is not null)::int - (nullif(r.shipping_to_customer_usd, 'NaN') is not null)::int as shn,
        coalesce(nullif(a.warehouse_fees_usd, 'NaN'), 0) - coalesce(nullif(r.warehouse_fees_usd, 'NaN'), 0) as wf,
        (nullif(a.warehouse_fees_usd, 'NaN') is not null)::int - (nullif(r.warehouse_fees_usd, 'NaN') is not null)::int as wfn
    ) one_day
    where n <> 0 or pc <> 0 or pcn <> 0 or fr <> 0 or frn <> 0 or sh <> 0 or shn <> 0 or wf <> 0 or wfn <> 0;
    return;
  end if;

  perform product_cost_deltas_note_general(added, removed);
end
$fn$;
