-- A writer's note names the month of any date PostgreSQL's date type holds (issue 43).
-- 0006 and 0010 found a row's month as date_trunc('month', cost_date::timestamp): a timestamp
-- ends in 294276 AD where a date goes on to 5874897 AD, so an ETL's insert of a row dated
-- past it failed in this trigger ("date out of range for timestamp"): the writer's statement,
-- not only ours. The month is now the date less its days, in dates; `infinity` and `-infinity`
-- are their own month (with no day: such a row lies in no range a request can name).

create or replace function product_cost_month_of(day date) returns date
  language sql immutable parallel safe
as $fn$
  select case when isfinite(day) then day - (extract(day from day)::int - 1) else day end
$fn$;

-- 0006's general function, its month found as above and otherwise unchanged: every statement
-- that changes more than one row, or a key.
create or replace function product_cost_deltas_note_general(added product_daily_costs[], removed product_daily_costs[]) returns void
  language plpgsql security definer set search_path from current
as $fn$
begin
  insert into product_cost_deltas (
    product_id, month, days, rows,
    purchase_cost_usd, purchase_cost_usd_count, inbound_freight_usd, inbound_freight_usd_count,
    shipping_to_customer_usd, shipping_to_customer_usd_count, warehouse_fees_usd, warehouse_fees_usd_count)
  with per_day as (
    select
      coalesce(a.product_id, r.product_id) as product_id,
      product_cost_month_of(coalesce(a.cost_date, r.cost_date)) as month,
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
    from unnest(added) as a
    full join unnest(removed) as r on r.product_id = a.product_id and r.cost_date = a.cost_date
  ),
  running as (
    select product_id, month, day,
      sum(n) over w as n,
      sum(pc) over w as pc, sum(pcn) over w as pcn, sum(fr) over w as fr, sum(frn) over w as frn,
      sum(sh) over w as sh, sum(shn) over w as shn, sum(wf) over w as wf, sum(wfn) over w as wfn
    from per_day
    where n <> 0 or pc <> 0 or pcn <> 0 or fr <> 0 or frn <> 0 or sh <> 0 or shn <> 0 or wf <> 0 or wfn <> 0
    window w as (partition by product_id, month order by day rows unbounded preceding)
  )
  select product_id, month, bit_or(1 << (day - 1)), array_agg(n::int),
    array_agg(pc), array_agg(pcn::int), array_agg(fr), array_agg(frn::int),
    array_agg(sh), array_agg(shn::int), array_agg(wf), array_agg(wfn::int)
  from running
  group by product_id, month;
end
$fn$;

-- 0010's one-row path, its month found as above and otherwise unchanged.
create or replace function product_cost_deltas_note(added product_daily_costs[], removed product_daily_costs[]) returns void
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
        product_cost_month_of(coalesce(a.cost_date, r.cost_date)) as month,
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
