-- The session back to the pool's settings when the refresh gives it back (session_settings.sql
-- undone, but temp_buffers: fixed once a temporary table was used).
do $$
begin
  reset statement_timeout;
  begin
    reset client_connection_check_interval;
  exception when undefined_object then null;
  end;
end
$$
