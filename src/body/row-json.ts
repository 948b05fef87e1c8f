// Writes product cost rows as JSON straight from the bytes PostgreSQL sent (ProductCostRow),
// without decoding them to strings and encoding them back. Ids and amounts are exact
// decimal text, spliced in as JSON numbers untouched (no Number() anywhere, so 2^63-1 and
// 99999999999999.999999 survive). Text fields are escaped byte by byte exactly as
// JSON.stringify (and the FastAPI original's json.dumps with ensure_ascii=False) escape
// them: `"` and `\`, the short forms \b \f \n \r \t, \u00xx for the other bytes below 0x20,
// and every other byte copied. That is enough for valid UTF-8, which all PostgreSQL text is.

import { PRODUCT_COST_COLUMNS, type ProductCostRow } from "../reads/answer-rows.ts";
import { finiteDecimal, isTextColumn } from "./row-cells.ts";

const encoder = new TextEncoder();

// The bytes before each field's value: {"erp_product_id": then ,"erp_sku": and so on.
const FIELD_PREFIXES = PRODUCT_COST_COLUMNS.map((name, i) => encoder.encode((i === 0 ? "{" : ",") + JSON.stringify(name) + ":"));
const NULL = encoder.encode("null");
const CLOSE_BRACE = 0x7d;
const COMMA = 0x2c;
const QUOTE = 0x22;

// What each byte becomes inside a JSON string (undefined: itself).
const ESCAPES: (Uint8Array | undefined)[] = Array.from({ length: 256 }, (_, b) => {
  if (b >= 0x20 && b !== QUOTE && b !== 0x5c) return undefined;
  return encoder.encode(JSON.stringify(String.fromCharCode(b)).slice(1, -1));
});

function escapedLength(cell: Uint8Array): number {
  let n = cell.length + 2;
  for (let i = 0; i < cell.length; i++) {
    const escape = ESCAPES[cell[i]!];
    if (escape) n += escape.length - 1;
  }
  return n;
}

function rowLength(row: ProductCostRow): number {
  let n = 1; // the closing brace
  for (let f = 0; f < FIELD_PREFIXES.length; f++) {
    const cell = row[f];
    n += FIELD_PREFIXES[f]!.length;
    if (cell == null) n += NULL.length;
    else if (isTextColumn(f)) n += escapedLength(cell);
    else n += finiteDecimal(cell, PRODUCT_COST_COLUMNS[f]!).length;
  }
  return n;
}

/**
 * `prefix` (ASCII, such as "[" or ","), then the rows as JSON objects separated by commas,
 * in UTF-8. Throws if an id or amount is not a finite decimal (NaN and Infinity have no
 * JSON form).
 */
export function rowsJson(rows: readonly ProductCostRow[], prefix = ""): Uint8Array {
  let size = prefix.length + Math.max(0, rows.length - 1);
  for (const row of rows) size += rowLength(row);
  const out = new Uint8Array(size);
  let o = encoder.encodeInto(prefix, out).written;
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    if (r > 0) out[o++] = COMMA;
    for (let f = 0; f < FIELD_PREFIXES.length; f++) {
      out.set(FIELD_PREFIXES[f]!, o);
      o += FIELD_PREFIXES[f]!.length;
      const cell = row[f];
      if (cell == null) {
        out.set(NULL, o);
        o += NULL.length;
      } else if (!isTextColumn(f)) {
        out.set(cell, o);
        o += cell.length;
      } else {
        out[o++] = QUOTE;
        for (let i = 0; i < cell.length; i++) {
          const escape = ESCAPES[cell[i]!];
          if (escape === undefined) out[o++] = cell[i]!;
          else {
            out.set(escape, o);
            o += escape.length;
          }
        }
        out[o++] = QUOTE;
      }
    }
    out[o++] = CLOSE_BRACE;
  }
  return out;
}
