-- The step that moves the rollup's last month (extend_months.sql) folds each product from the
-- month after the old last one at the latest.
--   $1 the first month the extension made (date)
update refresh_products set first_month = least(first_month, $1::date)
