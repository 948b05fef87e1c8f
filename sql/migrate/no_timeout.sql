-- A migration may read every daily row (0003 built the rollup from millions of them): the
-- serving statement timeout is for requests, not for this transaction.
set local statement_timeout = 0
