-- What the last refresh could not fold (migration 0013), or null when it folded everything, in
-- its last step's transaction: GET /metrics (product_cost_export_rollup_refresh_failing) and
-- /readyz read it.
--   $1 the failure, as the refresh logs it (text; null: none)
update product_cost_refreshes set failure = $1::text, failed_at = case when $1::text is null then null else clock_timestamp() end
