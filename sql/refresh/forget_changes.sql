-- The log rows this refresh has folded in: every row its snapshot sees. Rows written by
-- transactions that commit after the snapshot are not seen, so they stay for the next refresh.
delete from product_cost_deltas
