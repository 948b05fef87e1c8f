-- A drop of a partition waits at most a second for the reads on the months (this transaction).
select set_config('lock_timeout', '1000', true)
