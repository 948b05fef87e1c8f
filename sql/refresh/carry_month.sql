-- Past the month just written: each carried product's totals before the next month are its
-- totals before this one plus this month's own; refresh_month is emptied for the next month.
truncate refresh_carry;
insert into refresh_carry
select product_id,
  rows_before + bit_count(days::bit(32))::int,
  pc_before + pc_total, pcn_before + bit_count(pc_days::bit(32))::int,
  fr_before + fr_total, frn_before + bit_count(fr_days::bit(32))::int,
  sh_before + sh_total, shn_before + bit_count(sh_days::bit(32))::int,
  wf_before + wf_total, wfn_before + bit_count(wf_days::bit(32))::int
from refresh_month;
truncate refresh_month
