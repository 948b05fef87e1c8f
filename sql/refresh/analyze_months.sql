-- The statements that analyze the months' keys, the only columns any plan filters or joins on
-- (each returned statement is then run, as psql's \gexec would). Partitioned by month (0011),
-- the months a step added are partitions of their own: those alone (6 ms at 50,000 products),
-- not every partition again (ANALYZE of the parent takes each in turn: 580 ms); with none named
-- or found, the parent. Reads name a month by a constant, so their plans use the partition's.
--   $1 the rollup's last month before the step (date; null: the parent)   $2 its last month now
with added as (
  select format('analyze %s (month, product_id)', c.oid::regclass) as statement
  from pg_inherits i
  join pg_class c on c.oid = i.inhrelid
  where $1::date is not null and i.inhparent = 'product_cost_months'::regclass
    and c.relname = any(array(
      select 'product_cost_months_' || to_char(m, 'YYYY_MM')
      from generate_series($1::date + interval '1 month', $2::date, interval '1 month') m))
)
select statement from added
union all
select 'analyze product_cost_months (month, product_id)' where not exists (select from added)
