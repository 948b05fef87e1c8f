-- Which of an applied migration's tables (or "table.column"s) are gone, dropped by hand: that
-- migration runs again to restore them. A missing table's columns are missing too.
--   $1 the names (text[])
select t.name
from unnest($1::text[]) as t(name)
where not exists (
  select from pg_attribute a
  where a.attrelid = to_regclass(split_part(t.name, '.', 1))
    and (a.attname = split_part(t.name, '.', 2) or split_part(t.name, '.', 2) = '')
    and not a.attisdropped)
