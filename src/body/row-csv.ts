// Writes product cost rows as CSV (RFC 4180) for people who pull costs into a spreadsheet:
// a header line, CRLF line ends, a cell quoted only when it holds a comma, a quote, CR or
// LF (quotes doubled). A null is an empty cell and an empty string is "", so the two stay
// apart, as in PostgreSQL's COPY ... CSV. Ids and amounts are the exact decimal text from
// PostgreSQL, as in the JSON: no Number() anywhere. Like row-json.ts, it copies the bytes
// PostgreSQL sent (UTF-8) instead of decoding them.
//
// The Excel-safe variant (Accept: text/csv; variant=excel) differs in two ways only: a UTF-8
// byte order mark first, without which Excel reads the bytes in the machine's code page and
// garbles every non-ASCII name; and a text cell that begins with =, +, -, @, tab or CR, which
// a spreadsheet runs as a formula (OWASP's "CSV injection"), is written as OWASP recommends:
// quoted, behind a single quote, so it shows as the text it is. Amounts are numbers, never
// escaped: a negative amount stays a number.

import { PRODUCT_COST_COLUMNS, type ProductCostRow } from "../reads/answer-rows.ts";
import { finiteDecimal, isTextColumn } from "./row-cells.ts";
import type { RowEncoding } from "./row-stream.ts";

export const CSV_HEADER = PRODUCT_COST_COLUMNS.join(",") + "\r\n";

const encoder = new TextEncoder();
const QUOTE = 0x22;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const APOSTROPHE = 0x27;
/** First bytes a spreadsheet reads as the start of a formula (OWASP CSV injection). */
const FORMULA_LEAD = new Set([0x3d, 0x2b, 0x2d, 0x40, 0x09, 0x0d]); // = + - @ TAB CR

const startsFormula = (cell: Uint8Array) => cell.length > 0 && FORMULA_LEAD.has(cell[0]!);

/**
 * The bytes a text cell needs beyond its own to be one cell: 0 when none, else 2 plus one per
 * quote inside, plus the single quote of a formula-leading cell (`excel`).
 */
function quoting(cell: Uint8Array, excel: boolean): number {
  if (excel && startsFormula(cell)) return 3 + quoteCount(cell);
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

function quoteCount(cell: Uint8Array): number {
  let quotes = 0;
  for (let i = 0; i < cell.length; i++) if (cell[i] === QUOTE) quotes++;
  return quotes;
}

/** `prefix` (such as the header line), then one CRLF-terminated line per row, in UTF-8; `excel`: formula-leading text escaped. */
export function rowsCsv(rows: readonly ProductCostRow[], prefix = "", excel = false): Uint8Array {
  const prefixBytes = encoder.encode(prefix);
  let size = prefixBytes.length;
  const extra = new Int32Array(rows.length * PRODUCT_COST_COLUMNS.length); // each text cell's quoting
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    size += PRODUCT_COST_COLUMNS.length + 1; // the commas and CRLF
    for (let f = 0; f < PRODUCT_COST_COLUMNS.length; f++) {
      const cell = row[f];
      if (cell == null) continue;
      if (isTextColumn(f)) extra[r * PRODUCT_COST_COLUMNS.length + f] = quoting(cell, excel);
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
      if (excel && startsFormula(cell)) out[o++] = APOSTROPHE;
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

/** The Excel-safe variant: the BOM and the header line, then every row, formula-leading text escaped. */
export const CSV_EXCEL_TABLE: RowEncoding = {
  begin: (rows) => rowsCsv(rows, "\uFEFF" + CSV_HEADER, true),
  more: (rows) => rowsCsv(rows, "", true),
  end: "",
  rows: (rows) => rows.length,
};
