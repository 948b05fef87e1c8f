-- Every month through $1 (the last month a step writes) has its partition of
-- product_cost_months (migration 0011): made and attached in the step's own transaction,
-- before a row of that month is written. Nothing to do, and a catalog lookup, when the
-- months are covered already.
select product_cost_months_cover($1::date)
