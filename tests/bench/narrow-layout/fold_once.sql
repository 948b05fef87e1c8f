-- One fold of a day's write on each copy (fold_day.sql runs it twice): day 31 appended for every
-- product in the wide rows, then in the int8 ones, each rolled back.
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
