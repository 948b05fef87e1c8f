-- The statements that drop the months' partitions after the window's last month (a rebuild's
-- window ended earlier), each then run in a transaction of its own with lock_timeout.sql (a
-- partition's drop locks the table: waiting at most a second for reads, one it cannot drop
-- now stays, empty, for the next rebuild). As psql's \gexec would.
--   $1 the window's last month (date; null: every monthly partition)
select format('drop table %s', c.oid::regclass) as statement
from pg_inherits i
join pg_class c on c.oid = i.inhrelid
where i.inhparent = 'product_cost_months'::regclass
  and c.relname ~ '^product_cost_months_[0-9]{4}_[0-9]{2}$'
  and to_date(right(c.relname, 7), 'YYYY_MM') > coalesce($1::date, '-infinity')
order by 1
