-- The JSON answer of exactly one calendar month, quarter or year, as the last refresh
-- rendered it (product_cost_answers, migrations 0005 and 0006): the same bytes the service would write
-- for the rows of sql/queries/product_costs.sql, in chunks of 2,000 rows.
--
-- Parameters:
--   $1 period: 'month', 'quarter' or 'year'    $2 period_start: its first day (date)
--   $3 segment: 'normal', 'sample' or 'all'
-- Returns the answer's chunks in order ('[' || bodies || ']' is the answer), or no row when
-- there is no answer to trust at this snapshot: none was rendered, or product_cost_deltas
-- names a month of the period, a product's attributes, or everything. The service then
-- runs sql/queries/product_costs.sql, which is exact whatever the log holds.
select a.rows, a.body
from product_cost_answers a
where a.period = $1::text and a.period_start = $2::date and a.segment = $3::text
  and not exists (
    select 1 from product_cost_deltas c
    where c.month is null
       or (c.month >= $2::date
           and c.month < ($2::date + case $1::text when 'month' then interval '1 month'
                                                   when 'quarter' then interval '3 months'
                                                   else interval '1 year' end)::date))
order by a.chunk
