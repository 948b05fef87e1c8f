-- Writes refresh_month (month_rows.sql) over the month's rows that exist and still hold
-- something: found as start_month.sql finds rows (a sparse step: an index scan of the month
-- for these products' keys; a dense one: its ids in key order), joined to refresh_month by
-- hashing (nested loops are off).
-- Readers keep the old rows until the step commits. The arrays are most of a row: a product
-- whose days were not computed again keeps its own.
--   $1 the month (its first day)   $2 dense (boolean)   $3 the step's first product id   $4 its last
update product_cost_months t set
  rows_before                           = r.rows_before,
  purchase_cost_usd_before              = r.pc_before,
  purchase_cost_usd_count_before        = r.pcn_before,
  inbound_freight_usd_before            = r.fr_before,
  inbound_freight_usd_count_before      = r.frn_before,
  shipping_to_customer_usd_before       = r.sh_before,
  shipping_to_customer_usd_count_before = r.shn_before,
  warehouse_fees_usd_before             = r.wf_before,
  warehouse_fees_usd_count_before       = r.wfn_before,
  days                                  = r.days,
  purchase_cost_usd_days                = r.pc_days,
  inbound_freight_usd_days              = r.fr_days,
  shipping_to_customer_usd_days         = r.sh_days,
  warehouse_fees_usd_days               = r.wf_days,
  purchase_cost_usd                     = coalesce(r.pc, t.purchase_cost_usd),
  inbound_freight_usd                   = coalesce(r.fr, t.inbound_freight_usd),
  shipping_to_customer_usd              = coalesce(r.sh, t.shipping_to_customer_usd),
  warehouse_fees_usd                    = coalesce(r.wf, t.warehouse_fees_usd)
from refresh_month r
where t.month = $1::date and t.product_id between $3::bigint and $4::bigint
  and ($2::boolean or t.product_id = any(array(select product_id from refresh_month where existed and (rows_before > 0 or days <> 0))))
  and r.product_id = t.product_id and r.existed and (r.rows_before > 0 or r.days <> 0)
