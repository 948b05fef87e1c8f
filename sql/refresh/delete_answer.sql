-- Whatever answer one period still has, before it is rendered again.
--   $1 period   $2 period start (date)
delete from product_cost_answers where period = $1::text and period_start = $2::date
