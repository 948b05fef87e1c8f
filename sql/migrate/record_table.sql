-- The record of the migrations applied (GET /readyz and the service's source read it; the
-- serving role gets SELECT on it: sql/roles/readers-follow.sql).
create table if not exists schema_migrations (
  version    text primary key,
  name       text not null,
  checksum   text not null,
  applied_at timestamptz not null default now()
)
