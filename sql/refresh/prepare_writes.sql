-- Scratch tables of the refresh's transaction (gone at commit), after collect_changes.sql:
--   refresh_products  the products whose months are written again, from their first changed
--                     month on (a change to a month moves the totals before every later one);
--   refresh_carry     per product being written, its totals before the month being written
--                     (filled month by month: start_month.sql, write_month.sql).
create temporary table refresh_products on commit drop as
select product_id, min(month) as first_month from refresh_changed group by 1;

create temporary table refresh_carry (
  product_id bigint primary key,
  n integer, pc numeric, pcn integer, fr numeric, frn integer, sh numeric, shn integer, wf numeric, wfn integer
) on commit drop
