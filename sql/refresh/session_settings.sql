-- The refresh's own session settings, whatever the pool's (run once on its reserved session):
-- no statement timeout (a rebuild adds up millions of rows; the serving STATEMENT_TIMEOUT_MS is
-- for requests); the server checks every second that the client is still there, so that a
-- refresh whose process is gone stops in PostgreSQL and releases its lock at once (PostgreSQL
-- 14 and later; elsewhere the setting does not exist and a statement goes on until it next
-- writes to the client); and the scratch tables of a step hold up to a month of every product
-- in memory, not on disk (refused once the session has used a temporary table: it then keeps
-- the size it had).
do $$
begin
  perform set_config('statement_timeout', '0', false);
  begin
    perform set_config('client_connection_check_interval', '1000', false);
  exception when undefined_object then null;
  end;
  begin
    perform set_config('temp_buffers', '256MB', false);
  exception when others then null;
  end;
end
$$
