-- How a step reads (month_rows.sql): dense when its products are many among the ids they span
-- (each month's rows of those ids read in key order and hashed; else each product's looked up
-- by key), and how many daily rows a day of the window holds, from the planner's statistics (a
-- month's named pairs are read by key when that is fewer rows than reading their days by date).
--   $1, $2 the step's first and last product id   $3, $4 the window's first and last month
select (select count(*) from refresh_products) * 8 >= (select count(*) from products where product_id between $1::bigint and $2::bigint) as dense,
       coalesce(greatest(c.reltuples, 0) / nullif(($4::date + interval '1 month')::date - $3::date, 0), 0)::float8 as per_day
from pg_class c
where c.oid = 'product_daily_costs'::regclass
