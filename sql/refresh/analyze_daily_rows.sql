-- After a rebuild, which read the daily rows whole: after a TRUNCATE and reload the table's own
-- statistics say it is empty until something analyzes it (readers weigh a range's daily rows by
-- them). Before analyze_months.sql: the keys' statistics_target.sql lowers the sample size for
-- the rest of the transaction. A role that does not own the daily table gets a warning.
analyze product_daily_costs
