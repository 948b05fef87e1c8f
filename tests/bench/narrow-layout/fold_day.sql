-- A day's write folded, on copies of the wide and the narrow month rows: day 31 appended for
-- every product, twice each (fold_once.sql), rolled back. Its time is the UPDATE of 50,000 rows either way.
-- copies, so nothing real changes
drop table if exists wide_copy; create table wide_copy as select * from product_cost_months_2026_10; alter table wide_copy add primary key (month, product_id); vacuum analyze wide_copy;
drop table if exists narrow_copy; create table narrow_copy as select * from narrow_2026_10; alter table narrow_copy add primary key (month, product_id); vacuum analyze narrow_copy;
-- a day's write folded: day 31 appended for every product (as a fold of a new last day does)
\timing on
\ir fold_once.sql
\ir fold_once.sql
\timing off
drop table wide_copy; drop table narrow_copy;
