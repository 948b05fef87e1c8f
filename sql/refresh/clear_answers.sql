-- Drops the rendered answers this refresh makes stale, in the transaction that forgets the
-- log rows naming them (so no reader ever trusts an answer whose changes the log no longer
-- names): every answer when $1 (a rebuild, or a product's attributes changed), else those
-- of every period that holds a changed month; and any of a period wholly outside the data.
--   $1 every answer (boolean)
with named as (
  select distinct l.period, date_trunc(l.period, c.month::timestamp)::date as period_start
  from product_cost_deltas c cross join (values ('month'), ('quarter'), ('year')) as l(period)
  where c.product_id is not null and c.month is not null
)
delete from product_cost_answers a
where $1::boolean
   or (a.period, a.period_start) in (select period, period_start from named)
   or a.period_start > coalesce((select max(month) from product_cost_months), '-infinity')
   or (a.period_start + case a.period when 'month' then interval '1 month' when 'quarter' then interval '3 months' else interval '1 year' end)::date
      <= coalesce((select min(month) from product_cost_months), 'infinity')
