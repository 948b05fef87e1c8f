-- What a product that could not be folded has waiting, for the line that says so: the months
-- its notes name (the first twelve), how many notes, and its daily rows in those months.
--   $1 the product id
with named as (select month from product_cost_deltas where product_id = $1::bigint and month is not null)
select array(select distinct month::text from named order by 1 limit 12) as months,
       (select count(*)::int from named) as notes,
       (select count(*)::int from product_daily_costs d
        where d.product_id = $1::bigint and product_cost_month_of(d.cost_date) in (select month from named)) as rows
