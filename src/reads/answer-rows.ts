// The shape of an answer's rows as every read gives them (product-costs.ts, the edges'
// arithmetic in src/reads/edges/range-read.ts) and every encoder takes them (src/body/encode.ts):
// its own module, so that the reads and the edges share it without importing each other.

/**
 * One row of the answer as PostgreSQL sends it: each column's text in UTF-8, undecoded
 * (null for SQL NULL), in the order of PRODUCT_COST_COLUMNS. The encoders write these bytes
 * as they are (src/body/encode.ts): decoding 50,000 rows into strings only to encode
 * them again was the largest share of the service's own time.
 */
export type ProductCostRow = readonly (Uint8Array | null)[];

/** The answer's fields, in the order of the statements' columns and of the JSON and CSV output. */
export const PRODUCT_COST_COLUMNS = [
  "erp_product_id",
  "erp_sku",
  "product_name",
  "purchase_cost_usd",
  "inbound_freight_usd",
  "shipping_to_customer_usd",
  "warehouse_fees_usd",
] as const;

/**
 * A chunk of a rendered answer as PostgreSQL sends it, never decoded: [rows, body], the
 * number of row objects (as decimal text) and their JSON text separated by commas (UTF-8).
 */
export type RenderedChunk = [rows: Uint8Array, body: Uint8Array];
