-- A day's write folded, on copies of the wide and the narrow month rows: day 31 appended for
-- every product, twice each, rolled back. Its time is the UPDATE of 50,000 rows either way.
-- copies, so nothing real changes
drop table if exists wide_copy; create table wide_copy as select * from product_cost_months_2026_10; alter table wide_copy add primary key (month, product_id); vacuum analyze wide_copy;
drop table if exists narrow_copy; create table narrow_copy as select * from narrow_2026_10; alter table narrow_copy add primary key (month, product_id); vacuum analyze narrow_copy;
-- a day's write folded: day 31 appended for every product (as a fold of a new last day does)
\timing on
begin;
update wide_copy set days = days | (1 << 30), purchase_cost_usd_days = purchase_cost_usd_days | (1 << 30),
  purchase_cost_usd = purchase_cost_usd || (purchase_cost_usd[cardinality(purchase_cost_usd)] + 12.5),
  inbound_freight_usd = inbound_freight_usd || (inbound_freight_usd[cardinality(inbound_freight_usd)] + 1.25),
  shipping_to_customer_usd = shipping_to_customer_usd || (shipping_to_customer_usd[cardinality(shipping_to_customer_usd)] + 3.5),
  warehouse_fees_usd = warehouse_fees_usd || (warehouse_fees_usd[cardinality(warehouse_fees_usd)] + 0.75);
rollback;
begin;
update narrow_copy set days = days | (1 << 30), pc_d = pc_d | (1 << 30),
  pc = pc || (pc[cardinality(pc)] + 12500000), fr = fr || (fr[cardinality(fr)] + 1250000),
  sh = sh || (sh[cardinality(sh)] + 3500000), wf = wf || (wf[cardinality(wf)] + 750000);
rollback;
begin;
update wide_copy set days = days | (1 << 30), purchase_cost_usd_days = purchase_cost_usd_days | (1 << 30),
  purchase_cost_usd = purchase_cost_usd || (purchase_cost_usd[cardinality(purchase_cost_usd)] + 12.5),
  inbound_freight_usd = inbound_freight_usd || (inbound_freight_usd[cardinality(inbound_freight_usd)] + 1.25),
  shipping_to_customer_usd = shipping_to_customer_usd || (shipping_to_customer_usd[cardinality(shipping_to_customer_usd)] + 3.5),
  warehouse_fees_usd = warehouse_fees_usd || (warehouse_fees_usd[cardinality(warehouse_fees_usd)] + 0.75);
rollback;
begin;
update narrow_copy set days = days | (1 << 30), pc_d = pc_d | (1 << 30),
  pc = pc || (pc[cardinality(pc)] + 12500000), fr = fr || (fr[cardinality(fr)] + 1250000),
  sh = sh || (sh[cardinality(sh)] + 3500000), wf = wf || (wf[cardinality(wf)] + 750000);
rollback;
\timing off
drop table wide_copy; drop table narrow_copy;
