-- The rows refresh_month adds to the month: products that had none there and now hold something.
--   $1 the month (its first day)
insert into product_cost_months
select $1::date, product_id, rows_before, pc_before, pcn_before, fr_before, frn_before, sh_before, shn_before, wf_before, wfn_before,
  days, pc_days, fr_days, sh_days, wf_days, coalesce(pc, '{}'), coalesce(fr, '{}'), coalesce(sh, '{}'), coalesce(wf, '{}')
from refresh_month
where not existed and (rows_before > 0 or days <> 0)
order by product_id
