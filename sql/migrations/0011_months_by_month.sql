-- The months kept a month apart: product_cost_months partitioned by month.
--
-- Why: the refresh rewrites the rows of the latest month every day (the ETL's daily write),
-- and in one heap a rewritten row goes wherever a page has room for it. Every page of the
-- table keeps about a row's room (fillfactor 90, 0008), so after eight daily writes the
-- 50,000 rows of the month sat on 46,271 pages, one row to a page, where a month written
-- once sits on about 5,100. Every range a dashboard asks ends in that month, so every read
-- touched nine times the pages it needs (YTD 515 ms against 312 ms with the rows packed;
-- docs/performance.md). A month of its own keeps its rewritten rows among its own pages:
-- a partition holds one month (the latest twelve months of the data and every later one
-- each get one), and the months before those share one partition, `_history`, written
-- once and then only by a correction.
--
-- product_cost_months_cover(last) gives every month through `last` a partition; the
-- refresh calls it in each step before it writes a month (sql/refresh/cover_months.sql).
-- A partition is made on its own and then attached, which takes SHARE UPDATE EXCLUSIVE on
-- the months: reads and writes go on meanwhile. On a table that is not partitioned (one an
-- earlier migration's restore made again) it does nothing: the layout is lost, not the
-- rows.
--
-- Upgrade: the months as they are become `_history` (its index kept, no copy; attaching
-- checks that its rows lie below the bound, one scan), so upgrading costs one read of the
-- table, not a rewrite; each month after the last one the data reached gets a partition
-- of its own.

create or replace function product_cost_months_cover(last_day date) returns void
  language plpgsql set search_path from current set datestyle = 'ISO, YMD'
as $fn$
declare
  last_month date := date_trunc('month', last_day::timestamp)::date;
  covered    date; -- the first month no partition holds yet
  partition  text;
  options    text; -- the latest partition's storage parameters (an operator's autovacuum settings carry on)
begin
  if last_day is null or (select c.relkind from pg_class c where c.oid = 'product_cost_months'::regclass) <> 'p' then
    return;
  end if;
  select substring(pg_get_expr(c.relpartbound, c.oid) from $re$TO \('([0-9-]+)'\)$re$)::date, array_to_string(c.reloptions, ', ')
  into covered, options
  from pg_inherits i join pg_class c on c.oid = i.inhrelid
  where i.inhparent = 'product_cost_months'::regclass
  order by 1 desc nulls last limit 1;
  options := coalesce(nullif(options, ''), 'fillfactor = 90');
  if covered is null then
    -- No partition yet: the months before the data's latest twelve share one.
    covered := (last_month - interval '11 months')::date;
    create table product_cost_months_history (like product_cost_months including defaults) with (fillfactor = 90);
    execute format('alter table product_cost_months attach partition product_cost_months_history for values from (minvalue) to (%L)', covered);
  end if;
  while covered <= last_month loop
    partition := 'product_cost_months_' || to_char(covered, 'YYYY_MM');
    execute format('create table %I (like product_cost_months including defaults) with (%s)', partition, options);
    execute format('alter table product_cost_months attach partition %I for values from (%L) to (%L)',
      partition, covered, (covered + interval '1 month')::date);
    covered := (covered + interval '1 month')::date;
  end loop;
end
$fn$;

do $partition$
declare
  last_month date := (select max(month) from product_cost_months);
  reader     text;
begin
  if (select c.relkind from pg_class c where c.oid = 'product_cost_months'::regclass) = 'p' then
    return;
  end if;
  alter table product_cost_months rename to product_cost_months_history;
  alter index product_cost_months_pkey rename to product_cost_months_history_pkey;
  create table product_cost_months (like product_cost_months_history including defaults) partition by range (month);
  alter table product_cost_months add primary key (month, product_id);
  -- The readers of the old table read the new one (0006's rule: whoever may read the daily rows).
  for reader in
    select distinct pg_get_userbyid(a.grantee)
    from pg_class c cross join aclexplode(c.relacl) as a
    where c.oid = 'product_cost_months_history'::regclass and a.privilege_type = 'SELECT'
      and a.grantee <> 0 and a.grantee <> c.relowner
  loop
    execute format('grant select on product_cost_months to %I', reader);
  end loop;
  if last_month is null then
    -- Nothing built yet (a new database, or an upgrade whose rollup is rebuilt next): the
    -- refresh makes the partitions for the data it builds.
    drop table product_cost_months_history;
  else
    execute format('alter table product_cost_months attach partition product_cost_months_history for values from (minvalue) to (%L)',
      (last_month + interval '1 month')::date);
  end if;
end
$partition$;
