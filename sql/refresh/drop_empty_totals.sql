-- Rows of totals to date that hold no daily row (a product whose earliest rows were deleted,
-- or all of them) say what a missing row says: drop them. Only products the log names.
delete from product_month_costs t
where t.rows_to_date = 0
  and t.product_id in (select product_id from product_cost_changes where product_id is not null and month is not null)
