-- Whether the months are partitioned by month (migration 0011): a refresh may run on a
-- database before `migrate`.
select to_regprocedure('product_cost_months_cover(date)') is not null as partitioned
