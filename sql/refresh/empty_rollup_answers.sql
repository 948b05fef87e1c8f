-- A rebuild's start: every rendered answer deleted (as empty_rollup_months.sql).
delete from product_cost_answers
