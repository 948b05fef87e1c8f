-- The writers' notes are taken whatever the writer's session_replication_role. Until now the
-- notes' triggers were ordinary ones, which PostgreSQL skips in a session set to `replica`: the
-- apply worker of a logical replication subscription (an ERP's tables replicated into this
-- database), and bulk loaders that set it to skip foreign-key checks. Their writes left no note,
-- the refresh never folded them, and every read of the rollup answered the old sums, with ETags
-- that said nothing had changed. ENABLE ALWAYS: the triggers fire in every session (only an
-- explicit ALTER TABLE ... DISABLE TRIGGER stops them, and `migrate` and the refresh then see a
-- trigger that is not enabled always as one to make again: src/db/migrations.ts).
--
-- A write made in such a session before this migration is not in the rollup: the note of
-- everything below makes the next refresh rebuild it from the daily rows (reads add up the
-- daily rows until then: exact, slower), and moves every answer's version (an ETag a client
-- holds from before may stand for sums such a write changed; not the rebuild's own note, which
-- leaves versions as they are).

alter table product_daily_costs enable always trigger product_cost_deltas_on_insert;
alter table product_daily_costs enable always trigger product_cost_deltas_on_update;
alter table product_daily_costs enable always trigger product_cost_deltas_on_delete;
alter table product_daily_costs enable always trigger product_cost_deltas_on_truncate;
alter table products enable always trigger product_cost_deltas_on_product_update;

select product_cost_changes_everything();
