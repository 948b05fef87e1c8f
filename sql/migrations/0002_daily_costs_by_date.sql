-- The primary key leads with product_id, so a date-range read would scan the whole
-- table. This index lets PostgreSQL read only the days in the requested range.
create index if not exists product_daily_costs_cost_date_idx
  on product_daily_costs (cost_date);
