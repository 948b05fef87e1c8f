-- A rebuild's note of everything on a database before migration 0013 (no mark: its answers'
-- versions count it).
select product_cost_changes_everything()
