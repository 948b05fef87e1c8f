// Writes product cost rows as CSV (RFC 4180) for people who pull costs into a spreadsheet:
// a header line, CRLF line ends, a cell quoted only when it holds a comma, a quote, CR or
// LF (quotes doubled). A null is an empty cell and an empty string is "", so the two stay
// apart, as in PostgreSQL's COPY ... CSV. Ids and amounts are the exact decimal text from
// PostgreSQL, as in the JSON: no Number() anywhere.

import type { ProductCostRow } from "../db/product-costs.ts";
import { finiteDecimal } from "./row-json.ts";
import type { RowEncoding } from "./row-stream.ts";

export const CSV_COLUMNS = [
  "erp_product_id",
  "erp_sku",
  "product_name",
  "purchase_cost_usd",
  "inbound_freight_usd",
  "shipping_to_customer_usd",
  "warehouse_fees_usd",
] as const;

export const CSV_HEADER = CSV_COLUMNS.join(",") + "\r\n";

const NEEDS_QUOTES = /[",\r\n]/;

function text(value: string | null): string {
  if (value === null) return "";
  if (value === "") return '""';
  return NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

function decimal(value: string | null, field: string): string {
  return value === null ? "" : finiteDecimal(value, field);
}

export function rowCsv(r: ProductCostRow): string {
  return (
    decimal(r.erp_product_id, "erp_product_id") +
    "," + text(r.erp_sku) +
    "," + text(r.product_name) +
    "," + decimal(r.purchase_cost_usd, "purchase_cost_usd") +
    "," + decimal(r.inbound_freight_usd, "inbound_freight_usd") +
    "," + decimal(r.shipping_to_customer_usd, "shipping_to_customer_usd") +
    "," + decimal(r.warehouse_fees_usd, "warehouse_fees_usd") +
    "\r\n"
  );
}

export function rowsCsv(rows: readonly ProductCostRow[]): string {
  let out = "";
  for (const row of rows) out += rowCsv(row);
  return out;
}

/** The whole body: the header line, then every row (each line ends with CRLF). */
export const CSV_TABLE: RowEncoding = {
  begin: (rows) => CSV_HEADER + rowsCsv(rows),
  more: (rows) => rowsCsv(rows),
  end: "",
};
