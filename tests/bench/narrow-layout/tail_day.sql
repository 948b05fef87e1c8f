-- A day's write kept as rows of its own (one per product, int8 micro-units) instead of rewriting
-- every product's month row: the INSERT a fold of the day would make, twice, rolled back.
drop table if exists tail_days;
create table tail_days (day date not null, product_id bigint not null, n int not null, pc int8, pcn int, fr int8, frn int, sh int8, shn int, wf int8, wfn int, primary key (day, product_id));
\timing on
-- a day's write appended as a row per product (what a fold of the day would write, int8 micro-units)
begin;
insert into tail_days select '2026-10-31', product_id, 1, 12500000, 1, 1250000, 1, 3500000, 1, 750000, 1 from products;
rollback;
begin;
insert into tail_days select '2026-10-31', product_id, 1, 12500000, 1, 1250000, 1, 3500000, 1, 750000, 1 from products;
rollback;
