-- The products in the answers' order (src/reads/edges/edge-store.ts holds it, keyed by the catalogue
-- version of range_facts.sql): byte order of erp_sku (collate "C"), nulls last, then
-- erp_product_id and product_id, as every statement of the answers orders its rows. Each column
-- as text, as those statements send it; is_sample as 't' or 'f'. (The order names p's columns:
-- unqualified, a name is the output's, the text, and 10 would sort before 9.)
select p.product_id::text, p.erp_product_id::text, p.erp_sku, p.product_name, p.is_sample::text
from products p
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id
