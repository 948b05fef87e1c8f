-- The rebuild's scratch table of each (product, month)'s own totals; gone at commit.
create temporary table refresh_months (
  product_id bigint, month date, row_count bigint,
  pc numeric, pcn bigint, fr numeric, frn bigint, sh numeric, shn bigint, wf numeric, wfn bigint
) on commit drop
