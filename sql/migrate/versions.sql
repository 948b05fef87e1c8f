-- The versions applied (what this build lacks is pending).
select version from schema_migrations
