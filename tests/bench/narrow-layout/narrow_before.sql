-- An edge at a month's end from the narrow copy: its totals before the month alone (no array
-- read). $1 only keeps the statement's shape.
select array_agg(product_id)::text, array_agg(rows_before)::text, array_agg(pc_b)::text, array_agg(pcn_b)::text, array_agg(fr_b)::text, array_agg(frn_b)::text, array_agg(sh_b)::text, array_agg(shn_b)::text, array_agg(wf_b)::text, array_agg(wfn_b)::text
from narrow_2026_10 where $1::date is not null
