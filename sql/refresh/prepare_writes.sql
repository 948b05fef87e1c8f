-- Scratch tables of a step's transaction (gone at commit), after collect_changes.sql:
--   refresh_products  the products whose months are written again, from their first changed
--                     month on (a change to a month moves the totals before every later one);
--   refresh_carry     per product being written, its totals before the month being written
--                     (carry_month.sql moves them all past each month; start_month.sql adds
--                     a product starting in a month the rollup did not have);
--   refresh_month     the month being written: each carried product's row (month_rows.sql).
create temporary table refresh_products on commit drop as
select product_id, min(month) as first_month from refresh_changed group by 1;

create temporary table refresh_carry (
  product_id bigint not null,
  n integer not null, pc numeric not null, pcn integer not null, fr numeric not null, frn integer not null,
  sh numeric not null, shn integer not null, wf numeric not null, wfn integer not null
) on commit drop;

create temporary table refresh_month (
  product_id bigint not null,
  existed boolean not null, -- the month has a row for the product now
  -- the totals before the month (the carry)
  rows_before integer not null, pc_before numeric not null, pcn_before integer not null, fr_before numeric not null, frn_before integer not null,
  sh_before numeric not null, shn_before integer not null, wf_before numeric not null, wfn_before integer not null,
  -- the month's days and each amount's days
  days integer not null, pc_days integer not null, fr_days integer not null, sh_days integer not null, wf_days integer not null,
  -- the running sums, where computed again (null: the row's own, unchanged)
  pc numeric[], fr numeric[], sh numeric[], wf numeric[],
  -- the month's own sums (each amount's last running sum)
  pc_total numeric not null, fr_total numeric not null, sh_total numeric not null, wf_total numeric not null,
  -- update_months.sql finds each product's new values by this key
  primary key (product_id)
) on commit drop
