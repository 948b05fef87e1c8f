-- Answer versions: what the ETag of GET /external/v1/product-costs is made of (src/db/answer-version.ts).
--
-- The answer for a range [from, to] changes only when a committed write changes one of its
-- days, a product's attributes, or everything (a TRUNCATE). Every such write leaves notes in
-- product_cost_deltas (0006); the refresh folds them and forgets them. This table keeps what
-- the refresh forgot, counted:
--   day        how many (note, day) pairs were folded for that day: a note counts once for
--              every day of its `days` bitmask;
--   -infinity  how many attribute notes (product, null) were folded;
--   infinity   how many everything notes (null, null) were folded.
-- The version of [from, to] is then, in one snapshot: the folded counts of its days plus the
-- (note, day) pairs still waiting inside it, the attribute counts folded plus waiting, and the
-- everything counts folded plus waiting. A refresh moves counts from the log to this table in
-- one transaction, so it leaves every version as it was; a write only ever adds; a write
-- outside the range adds nothing to it. Two instances on one database (or a replica at the
-- same state) read the same numbers.
--
-- And when the data of a range last changed, for the header a person reads (X-Data-Changed-At,
-- docs/api.md): each note keeps the time its writing statement started (noted_at: the
-- writer's, by the database's clock; the commit comes a little later), and each day here the
-- latest of the notes folded into it.
create table if not exists product_cost_folded_changes (
  day             date        primary key,
  changes         bigint      not null,
  last_changed_at timestamptz not null
);
-- The notes already waiting get the time of this migration (their own is not known).
alter table product_cost_deltas add column if not exists noted_at timestamptz not null default statement_timestamp();

-- The serving role reads it, as it reads the log (see 0006).
do $grants$
declare
  reader text;
begin
  for reader in
    select distinct pg_get_userbyid(a.grantee)
    from pg_class c cross join aclexplode(c.relacl) as a
    where c.oid = 'product_daily_costs'::regclass and a.privilege_type = 'SELECT'
      and a.grantee <> 0 and a.grantee <> c.relowner -- not PUBLIC, not the owner
  loop
    execute format('grant select on product_cost_folded_changes to %I', reader);
  end loop;
end
$grants$;
