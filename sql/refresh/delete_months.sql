-- A row with nothing before it and no day says what a missing row says (a product whose
-- earliest rows, or all, were deleted): deleted, by key.
--   $1 the month (its first day)
delete from product_cost_months
where month = $1::date
  and product_id = any(array(select product_id from refresh_month where existed and rows_before = 0 and days = 0))
