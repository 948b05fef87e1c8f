-- Whether any migration was ever applied (a database as the ETL left it has no record).
select to_regclass('schema_migrations') is not null as ok
