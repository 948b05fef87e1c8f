-- The edge through $1 (a day of October) from the narrow copy: product_costs_edge.sql's arrays,
-- int8 micro-units, nothing waiting (the bench database is folded).
select
  array_agg(m.product_id)::text, array_agg(m.rows_before + m.k)::text,
  array_agg(m.pc_b + coalesce(m.pc[m.k], 0))::text, array_agg(m.pcn_b + bit_count((m.pc_d & m.mask)::bit(32)))::text,
  array_agg(m.fr_b + coalesce(m.fr[m.k], 0))::text, array_agg(m.frn_b + bit_count((m.fr_d & m.mask)::bit(32)))::text,
  array_agg(m.sh_b + coalesce(m.sh[m.k], 0))::text, array_agg(m.shn_b + bit_count((m.sh_d & m.mask)::bit(32)))::text,
  array_agg(m.wf_b + coalesce(m.wf[m.k], 0))::text, array_agg(m.wfn_b + bit_count((m.wf_d & m.mask)::bit(32)))::text
from (
  select n.*, b.mask, bit_count((n.days & b.mask)::bit(32))::int as k
  from (select ((1::bigint << extract(day from $1::date)::int) - 1)::int as mask) b
  join narrow_2026_10 n on n.month = '2026-10-01'
  offset 0
) m
