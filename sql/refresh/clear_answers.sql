-- Drops the rendered answers a step makes stale, in the transaction that forgets the notes
-- naming them (so no reader ever trusts an answer whose changes the log no longer names):
-- every answer when $1 (a rebuild, or a product's attributes changed), else those of every
-- period that holds a month its notes name (step_notes.sql); and any of a period wholly
-- outside the rollup's months. (Answers are of periods in the window of months, migration
-- 0013: a note outside it makes none stale.)
--   $1 every answer (boolean)   $2 the window's first month (date)   $3 its last month (date)
with months as (
  select distinct month from refresh_notes where month between $2::date and $3::date
),
named as (
  select distinct l.period, date_trunc(l.period, m.month::timestamp)::date as period_start
  from months m cross join (values ('month'), ('quarter'), ('year')) as l(period)
)
delete from product_cost_answers a
where $1::boolean
   or (a.period, a.period_start) in (select period, period_start from named)
   or a.period_start > coalesce((select max(month) from product_cost_months), '-infinity')
   or (a.period_start + case a.period when 'month' then interval '1 month' when 'quarter' then interval '3 months' else interval '1 year' end)::date
      <= coalesce((select min(month) from product_cost_months), 'infinity')
