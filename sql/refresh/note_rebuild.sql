-- A rebuild's own note of everything (no write changed the data): marked days = -1, so that
-- the answers' versions do not count it (migration 0013). Reads add up the daily rows until
-- the rebuild's last step deletes it.
insert into product_cost_deltas (product_id, month, days) values (null, null, -1)
