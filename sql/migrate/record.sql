-- A migration applied (or recorded without running: superseded), with its SQL's checksum: a
-- migration changed after it was applied stops `migrate`.
--   $1 version   $2 name   $3 sha256 of its SQL
insert into schema_migrations (version, name, checksum) values ($1, $2, $3)
