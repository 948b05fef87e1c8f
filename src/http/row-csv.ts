// Writes product cost rows as CSV (RFC 4180) for people who pull costs into a spreadsheet:
// a header line, CRLF line ends, a cell quoted only when it holds a comma, a quote, CR or
// LF (quotes doubled). A null is an empty cell and an empty string is "", so the two stay
// apart, as in PostgreSQL's COPY ... CSV. Ids and amounts are the exact decimal text from
// PostgreSQL, as in the JSON: no Number() anywhere. Like row-json.ts, it copies the bytes
// PostgreSQL sent (UTF-8) instead of decoding them.

import { PRODUCT_COST_COLUMNS, type ProductCostRow } from "../db/product-costs.ts";
import { finiteDecimal, isTextColumn } from "./row-cells.ts";
import type { RowEncoding } from "./row-stream.ts";

export const CSV_HEADER = PRODUCT_COST_COLUMNS.join(",") + "\r\n";

const encoder = new TextEncoder();
const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;

/** The quotes a text cell needs to be one cell: 0 when none, else 2 plus one per quote inside. */
function quoting(cell: Uint8Array): number {
  if (cell.length === 0) return 2; // "" keeps an empty string apart from a null
  let quotes = 0;
  let special = false;
  for (let i = 0; i < cell.length; i++) {
    const b = cell[i]!;
    if (b === QUOTE) quotes++;
    else if (b === COMMA || b === CR || b === LF) special = true;
  }
  return quotes > 0 || special ? 2 + quotes : 0;
}

/** `prefix` (such as the header line), then one CRLF-terminated line per row, in UTF-8. */
export function rowsCsv(rows: readonly ProductCostRow[], prefix = ""): Uint8Array {
  const prefixBytes = encoder.encode(prefix);
  let size = prefixBytes.length;
  const extra = new Int32Array(rows.length * PRODUCT_COST_COLUMNS.length); // each text cell's quoting
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    size += PRODUCT_COST_COLUMNS.length + 1; // the commas and CRLF
    for (let f = 0; f < PRODUCT_COST_COLUMNS.length; f++) {
      const cell = row[f];
      if (cell == null) continue;
      if (isTextColumn(f)) extra[r * PRODUCT_COST_COLUMNS.length + f] = quoting(cell);
      else finiteDecimal(cell, PRODUCT_COST_COLUMNS[f]!);
      size += cell.length + extra[r * PRODUCT_COST_COLUMNS.length + f]!;
    }
  }
  const out = new Uint8Array(size);
  out.set(prefixBytes);
  let o = prefixBytes.length;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let f = 0; f < PRODUCT_COST_COLUMNS.length; f++) {
      if (f > 0) out[o++] = COMMA;
      const cell = row[f];
      if (cell == null) continue;
      if (extra[r * PRODUCT_COST_COLUMNS.length + f] === 0) {
        out.set(cell, o);
        o += cell.length;
        continue;
      }
      out[o++] = QUOTE;
      for (let i = 0; i < cell.length; i++) {
        if (cell[i] === QUOTE) out[o++] = QUOTE;
        out[o++] = cell[i]!;
      }
      out[o++] = QUOTE;
    }
    out[o++] = CR;
    out[o++] = LF;
  }
  return out;
}

/** The whole body: the header line, then every row (each line ends with CRLF). */
export const CSV_TABLE: RowEncoding = {
  begin: (rows) => rowsCsv(rows, CSV_HEADER),
  more: (rows) => rowsCsv(rows),
  end: "",
  rows: (rows) => rows.length,
};
