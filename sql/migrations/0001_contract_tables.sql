-- The base tables of the contract with the ETL (shared contract/schema.sql): the ETL
-- writes them, the service only reads them. `if not exists` lets `migrate` adopt a
-- database where the ETL already created them.
create table if not exists products (
  product_id     bigint primary key,          -- internal (dashboard) product id
  erp_product_id bigint,                      -- null = not mapped to the ERP
  erp_sku        text,                        -- null = not mapped to the ERP
  product_name   text,
  is_sample      boolean not null default false  -- segment: false = normal, true = sample
);

create table if not exists product_daily_costs (
  product_id               bigint not null references products(product_id),
  cost_date                date   not null,
  purchase_cost_usd        numeric(20,6),     -- null = not costed
  inbound_freight_usd      numeric(20,6),
  shipping_to_customer_usd numeric(20,6),
  warehouse_fees_usd       numeric(20,6),
  primary key (product_id, cost_date)
);
