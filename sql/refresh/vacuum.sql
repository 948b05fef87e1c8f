-- The statement that vacuums what a refresh left dead (none: nothing to vacuum), then run
-- outside a transaction, as psql's \gexec would. The log after a fold, at once: every read
-- scans it, and writers' notes reuse its space, also where autovacuum is off or behind. The
-- months and answers with the other upkeep: after a fold, both; when idle, those with 1,000
-- dead rows or more (a fold whose upkeep was left to an idle refresh), the months' partitions
-- each.
--   $1 the log (a fold ran)   $2 the months and answers (upkeep)   $3 idle (only those with dead rows)
with tables as (
  select 'product_cost_deltas'::regclass as t where $1::boolean
  union all
  select t::regclass from unnest(array['product_cost_months', 'product_cost_answers']) t where $2::boolean and not $3::boolean
  union all
  select s.relid::regclass from pg_stat_user_tables s
  where $2::boolean and $3::boolean and s.n_dead_tup >= 1000
    and (s.relid in ('product_cost_answers'::regclass, 'product_cost_months'::regclass)
         or s.relid in (select inhrelid from pg_inherits where inhparent = 'product_cost_months'::regclass))
)
select 'vacuum ' || string_agg(t::text, ', ' order by t::text) as statement from tables having count(*) > 0
