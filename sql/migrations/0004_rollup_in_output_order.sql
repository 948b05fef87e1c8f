-- Exactly one calendar month, quarter or year (the ranges a product-profit view pulls
-- most) is one rollup row per product. This migration lets such a read come straight off
-- an index in the response's order: no join with products, no sort, and the first rows
-- leave while the last are still being read.
--
-- Each rollup row gets a copy of its product's attributes (erp_product_id, erp_sku,
-- product_name, is_sample), and an index in the response's order per period. The copies
-- are kept exact by triggers:
--   writes to product_daily_costs  a rollup row created by the sync trigger takes the
--                                  attributes of its product, read FOR SHARE: a
--                                  concurrent UPDATE of that product either commits
--                                  first (and is read) or waits for this commit (and then
--                                  rewrites the new row too);
--   UPDATE of products             rewrites the copies of the products whose attributes
--                                  changed (an index on product_id finds them).
-- INSERT into products needs nothing (a new product has no daily rows yet), nor does
-- DELETE (the foreign key keeps a product with daily rows), nor TRUNCATE (it must take
-- product_daily_costs along, whose trigger empties the rollup).
-- Reads of any other range still join products, and ignore the copies.
--
-- What writers must know: a daily write share-locks the products it touches until it
-- commits, so an UPDATE of those products waits for it (and the two can deadlock, 40P01,
-- which the ETL retries); products must be written in READ COMMITTED (PostgreSQL's
-- default), which the copy trigger enforces, because a snapshot older than the statement
-- cannot see a rollup row a concurrent daily write has just committed.
--
-- Lock the base tables first, in the order a daily write takes them (the daily table,
-- then products, then the rollup), so that this migration waits for writers in flight
-- instead of deadlocking with them. Reads of the rollup wait until it commits.
lock table product_daily_costs, products in share row exclusive mode;

-- The triggers below run as this migration's role (security definer): reading products
-- FOR SHARE needs UPDATE on it. Say so now rather than on the ETL's next write.
do $check$
begin
  if not has_table_privilege('products', 'UPDATE') then
    raise exception 'migration 0004 must run as a role with UPDATE on products (the owner of the tables)';
  end if;
end
$check$;

alter table product_period_costs
  add column erp_product_id bigint,
  add column erp_sku        text,
  add column product_name   text,
  add column is_sample      boolean;

create or replace function product_period_costs_sync() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
-- As in 0003 (the same statement three times, one per event: static SQL is planned once
-- per session), and new rollup rows take their product's attributes.
declare
  emptied_periods text[];
  emptied_starts date[];
  emptied_products bigint[];
begin
  if tg_op = 'INSERT' then
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select 1 as sign, * from new_rows) c
      group by 1, 2
    ),
    delta as (
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    ),
    attributes as materialized (
      -- FOR SHARE waits for an uncommitted UPDATE of the product and reads what it committed.
      select p.product_id, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample
      from products p
      where p.product_id in (select product_id from months)
      order by p.product_id
      for share of p
    )
    insert into product_period_costs as r
    select d.*, a.erp_product_id, a.erp_sku, a.product_name, a.is_sample
    -- A left join: were a product missing (the foreign key forbids it), is_sample's NOT NULL
    -- fails the write instead of dropping its change to the sums.
    from delta d left join attributes a on a.product_id = d.product_id
    where d.row_count <> 0
       or d.purchase_cost_usd_sum <> 0 or d.purchase_cost_usd_count <> 0
       or d.inbound_freight_usd_sum <> 0 or d.inbound_freight_usd_count <> 0
       or d.shipping_to_customer_usd_sum <> 0 or d.shipping_to_customer_usd_count <> 0
       or d.warehouse_fees_usd_sum <> 0 or d.warehouse_fees_usd_count <> 0
    order by d.period, d.period_start, d.product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count;
    return null;
  elsif tg_op = 'UPDATE' then
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select 1 as sign, * from new_rows union all select -1, * from old_rows) c
      group by 1, 2
    ),
    delta as (
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    ),
    attributes as materialized (
      select p.product_id, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample
      from products p
      where p.product_id in (select product_id from months)
      order by p.product_id
      for share of p
    ),
    upserted as (
    insert into product_period_costs as r
    select d.*, a.erp_product_id, a.erp_sku, a.product_name, a.is_sample
    -- A left join: were a product missing (the foreign key forbids it), is_sample's NOT NULL
    -- fails the write instead of dropping its change to the sums.
    from delta d left join attributes a on a.product_id = d.product_id
    where d.row_count <> 0
       or d.purchase_cost_usd_sum <> 0 or d.purchase_cost_usd_count <> 0
       or d.inbound_freight_usd_sum <> 0 or d.inbound_freight_usd_count <> 0
       or d.shipping_to_customer_usd_sum <> 0 or d.shipping_to_customer_usd_count <> 0
       or d.warehouse_fees_usd_sum <> 0 or d.warehouse_fees_usd_count <> 0
    order by d.period, d.period_start, d.product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count
    returning r.period, r.period_start, r.product_id, r.row_count
    )
    select array_agg(period), array_agg(period_start), array_agg(product_id) from upserted where row_count = 0
    into emptied_periods, emptied_starts, emptied_products;
  else
    with months as (
      select
        date_trunc('month', c.cost_date::timestamp)::date            as month_start,
        c.product_id,
        sum(c.sign)                                                  as row_count,
        coalesce(sum(c.sign * c.purchase_cost_usd), 0)               as purchase_cost_usd_sum,
        sum(c.sign * (c.purchase_cost_usd is not null)::int)        as purchase_cost_usd_count,
        coalesce(sum(c.sign * c.inbound_freight_usd), 0)             as inbound_freight_usd_sum,
        sum(c.sign * (c.inbound_freight_usd is not null)::int)      as inbound_freight_usd_count,
        coalesce(sum(c.sign * c.shipping_to_customer_usd), 0)        as shipping_to_customer_usd_sum,
        sum(c.sign * (c.shipping_to_customer_usd is not null)::int) as shipping_to_customer_usd_count,
        coalesce(sum(c.sign * c.warehouse_fees_usd), 0)              as warehouse_fees_usd_sum,
        sum(c.sign * (c.warehouse_fees_usd is not null)::int)       as warehouse_fees_usd_count
      from (select -1 as sign, * from old_rows) c
      group by 1, 2
    ),
    delta as (
      select
        l.period, date_trunc(l.period, m.month_start::timestamp)::date as period_start, m.product_id,
        sum(m.row_count) as row_count,
        sum(m.purchase_cost_usd_sum) as purchase_cost_usd_sum,               sum(m.purchase_cost_usd_count) as purchase_cost_usd_count,
        sum(m.inbound_freight_usd_sum) as inbound_freight_usd_sum,           sum(m.inbound_freight_usd_count) as inbound_freight_usd_count,
        sum(m.shipping_to_customer_usd_sum) as shipping_to_customer_usd_sum, sum(m.shipping_to_customer_usd_count) as shipping_to_customer_usd_count,
        sum(m.warehouse_fees_usd_sum) as warehouse_fees_usd_sum,             sum(m.warehouse_fees_usd_count) as warehouse_fees_usd_count
      from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
      group by 1, 2, 3
    ),
    attributes as materialized (
      select p.product_id, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample
      from products p
      where p.product_id in (select product_id from months)
      order by p.product_id
      for share of p
    ),
    upserted as (
    insert into product_period_costs as r
    select d.*, a.erp_product_id, a.erp_sku, a.product_name, a.is_sample
    -- A left join: were a product missing (the foreign key forbids it), is_sample's NOT NULL
    -- fails the write instead of dropping its change to the sums.
    from delta d left join attributes a on a.product_id = d.product_id
    where d.row_count <> 0
       or d.purchase_cost_usd_sum <> 0 or d.purchase_cost_usd_count <> 0
       or d.inbound_freight_usd_sum <> 0 or d.inbound_freight_usd_count <> 0
       or d.shipping_to_customer_usd_sum <> 0 or d.shipping_to_customer_usd_count <> 0
       or d.warehouse_fees_usd_sum <> 0 or d.warehouse_fees_usd_count <> 0
    order by d.period, d.period_start, d.product_id
    on conflict (period, period_start, product_id) do update set
      row_count                      = r.row_count                      + excluded.row_count,
      purchase_cost_usd_sum          = r.purchase_cost_usd_sum          + excluded.purchase_cost_usd_sum,
      purchase_cost_usd_count        = r.purchase_cost_usd_count        + excluded.purchase_cost_usd_count,
      inbound_freight_usd_sum        = r.inbound_freight_usd_sum        + excluded.inbound_freight_usd_sum,
      inbound_freight_usd_count      = r.inbound_freight_usd_count      + excluded.inbound_freight_usd_count,
      shipping_to_customer_usd_sum   = r.shipping_to_customer_usd_sum   + excluded.shipping_to_customer_usd_sum,
      shipping_to_customer_usd_count = r.shipping_to_customer_usd_count + excluded.shipping_to_customer_usd_count,
      warehouse_fees_usd_sum         = r.warehouse_fees_usd_sum         + excluded.warehouse_fees_usd_sum,
      warehouse_fees_usd_count       = r.warehouse_fees_usd_count       + excluded.warehouse_fees_usd_count
    returning r.period, r.period_start, r.product_id, r.row_count
    )
    select array_agg(period), array_agg(period_start), array_agg(product_id) from upserted where row_count = 0
    into emptied_periods, emptied_starts, emptied_products;
  end if;

  -- A separate statement: within the one above, the upserted row versions are not visible.
  if emptied_periods is not null then
    delete from product_period_costs r
    using unnest(emptied_periods, emptied_starts, emptied_products) as e(period, period_start, product_id)
    where (r.period, r.period_start, r.product_id) = (e.period, e.period_start, e.product_id) and r.row_count = 0;
  end if;
  return null;
end
$fn$;

create function product_period_costs_copy_products() returns trigger
  language plpgsql security definer set search_path from current
as $fn$
declare
  ids bigint[]; erp_ids bigint[]; skus text[]; names text[]; samples boolean[];
begin
  -- The products whose attributes changed: a set difference (hashed or sorted, linear even
  -- when an ETL upserts every product unchanged), gathered into arrays so that the UPDATE
  -- below is planned for their real number (none: no statement at all).
  select array_agg(c.product_id), array_agg(c.erp_product_id), array_agg(c.erp_sku), array_agg(c.product_name), array_agg(c.is_sample)
  into ids, erp_ids, skus, names, samples
  from (
    select product_id, erp_product_id, erp_sku, product_name, is_sample from new_rows
    except
    select product_id, erp_product_id, erp_sku, product_name, is_sample from old_rows
  ) c;
  if ids is null then
    return null;
  end if;
  if current_setting('transaction_isolation') <> 'read committed' then
    -- This UPDATE would miss a rollup row that a concurrent daily write committed after
    -- the transaction's snapshot (it waited for that write's share lock on the product).
    raise exception 'products must be updated in READ COMMITTED, not %', current_setting('transaction_isolation')
      using errcode = '0A000',
            hint = 'product-cost-export keeps copies of product attributes in product_period_costs';
  end if;
  -- A rollup row belongs to whichever product has its id after the statement (the foreign
  -- key lets an id move only to a product without daily rows, which has no rollup rows).
  update product_period_costs r set
    erp_product_id = c.erp_product_id,
    erp_sku        = c.erp_sku,
    product_name   = c.product_name,
    is_sample      = c.is_sample
  from unnest(ids, erp_ids, skus, names, samples) as c(product_id, erp_product_id, erp_sku, product_name, is_sample)
  where r.product_id = c.product_id;
  return null;
end
$fn$;

create trigger product_period_costs_on_product_update
  after update on products
  referencing old table as old_rows new table as new_rows
  for each statement execute function product_period_costs_copy_products();

create or replace function product_period_costs_rebuild() returns void
  language plpgsql security definer set search_path from current
as $fn$
begin
  -- Writers wait until the rebuild commits, and so do readers of the rollup (TRUNCATE locks it).
  lock table product_daily_costs, products in share row exclusive mode;
  truncate product_period_costs;
  insert into product_period_costs
  select m.*, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample
  from (
    select
      'month' as period, date_trunc('month', d.cost_date::timestamp)::date as period_start, d.product_id,
      count(*),
      coalesce(sum(d.purchase_cost_usd), 0),        count(d.purchase_cost_usd),
      coalesce(sum(d.inbound_freight_usd), 0),      count(d.inbound_freight_usd),
      coalesce(sum(d.shipping_to_customer_usd), 0), count(d.shipping_to_customer_usd),
      coalesce(sum(d.warehouse_fees_usd), 0),       count(d.warehouse_fees_usd)
    from product_daily_costs d
    group by 2, 3
  ) m
  join products p on p.product_id = m.product_id
  order by m.period_start, m.product_id;
  -- Quarters and years from the months, not from the daily rows again.
  insert into product_period_costs
  select q.*, p.erp_product_id, p.erp_sku, p.product_name, p.is_sample
  from (
    select
      l.period, date_trunc(l.period, m.period_start::timestamp)::date as period_start, m.product_id,
      sum(m.row_count),
      sum(m.purchase_cost_usd_sum),        sum(m.purchase_cost_usd_count),
      sum(m.inbound_freight_usd_sum),      sum(m.inbound_freight_usd_count),
      sum(m.shipping_to_customer_usd_sum), sum(m.shipping_to_customer_usd_count),
      sum(m.warehouse_fees_usd_sum),       sum(m.warehouse_fees_usd_count)
    from product_period_costs m cross join (values ('quarter'), ('year')) as l(period)
    where m.period = 'month'
    group by 1, 2, 3
  ) q
  join products p on p.product_id = q.product_id
  order by q.period, q.period_start, q.product_id;
  analyze product_period_costs;
end
$fn$;

-- Fill the new columns (and the rollup of any writes made with triggers disabled).
select product_period_costs_rebuild();
alter table product_period_costs alter column is_sample set not null;

-- The copy trigger finds a product's rollup rows by product_id.
create index product_period_costs_product_idx on product_period_costs (product_id);
-- One period in the response's order (sql/queries/product_costs_one_period.sql).
create index product_period_costs_output_order_idx on product_period_costs
  (period, period_start, (erp_sku collate "C") nulls last, erp_product_id, product_id);
analyze product_period_costs;
