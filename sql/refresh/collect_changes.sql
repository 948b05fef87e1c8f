-- The (product, month) pairs the log names, once, in a scratch table of the refresh's
-- transaction (gone at commit). The refresh analyzes it before use: the planner then knows
-- how many there are and looks each one up by key when they are few, instead of reading
-- every row of the totals.
create temporary table refresh_changed on commit drop as
select distinct product_id, month from product_cost_changes where product_id is not null and month is not null
