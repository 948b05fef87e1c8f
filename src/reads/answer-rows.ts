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

// What every encoder (src/body/encode.ts, src/body/arrow.ts) needs to know of a row's cells:
// which are text, and that an id or amount is a finite decimal.

const TEXT_COLUMNS = PRODUCT_COST_COLUMNS.map((name) => name === "erp_sku" || name === "product_name");

/** Column `index` is text (a JSON string); the others are ids and amounts (JSON numbers). */
export function isTextColumn(index: number): boolean {
  return TEXT_COLUMNS[index]!;
}

const MINUS = 0x2d;
const DOT = 0x2e;
const isDigit = (b: number | undefined) => b !== undefined && b >= 0x30 && b <= 0x39;

/**
 * `cell` as it is when it is PostgreSQL's text of a finite bigint or numeric (an optional
 * minus, digits, an optional fraction); NaN and Infinity have no JSON or CSV number form,
 * so anything else is refused with an error that names the field.
 */
export function finiteDecimal(cell: Uint8Array, field: string): Uint8Array {
  let i = cell[0] === MINUS ? 1 : 0;
  const integerStart = i;
  while (isDigit(cell[i])) i++;
  let valid = i > integerStart;
  if (valid && i < cell.length) {
    const fractionStart = ++i;
    valid = cell[fractionStart - 1] === DOT;
    while (isDigit(cell[i])) i++;
    valid &&= i > fractionStart && i === cell.length;
  }
  if (!valid) throw new Error(`${field} is not a finite decimal: ${new TextDecoder().decode(cell.subarray(0, 40))}`);
  return cell;
}
