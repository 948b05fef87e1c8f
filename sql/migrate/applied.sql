-- The migrations applied, with their checksums.
select version, checksum from schema_migrations
