-- A rebuild starts from nothing (DELETE, not TRUNCATE: readers keep the old totals, and
-- their answers, until the rebuild commits).
delete from product_month_costs
