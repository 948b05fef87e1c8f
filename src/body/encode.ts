// The encode stage of GET /external/v1/product-costs (src/service/pipeline.ts): a 200's rows
// written as the bytes of its format, batch by batch as they are read.

import type { ProductCostRead } from "../reads/product-costs.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import type { ChunkStream } from "./chunk-stream.ts";
import { BASE_HEADERS, type Exchange } from "../request/exchange.ts";
import { finiteDecimal, isTextColumn, PRODUCT_COST_COLUMNS, type ProductCostRow, type RenderedChunk } from "../reads/answer-rows.ts";
import { ARROW_STREAM_TYPE, arrowStream } from "./arrow.ts";
import type { Read } from "../reads/read.ts";

// The 200 of GET /external/v1/product-costs: the rows as a JSON array (the default, what
// the specification promises), as CSV or as an Arrow stream (arrow.ts) when the Accept header
// prefers it; or the JSON answer the refresh rendered for an exact calendar period, as it is.
// All carry Vary: Accept, since the same URL has several representations. body.ts sends it.

export const CSV_TYPE = "text/csv; charset=utf-8";
/** The Excel-safe variant says what it is, as it was asked for. */
export const CSV_EXCEL_TYPE = "text/csv; charset=utf-8; variant=excel";

/** The headers of the 200 of `key` (its format chosen from the Accept header). */
export function answerHeaders(key: AnswerKey): Record<string, string> {
  if (key.format === "json") return { ...BASE_HEADERS, vary: "Accept" };
  // The dates are validated YYYY-MM-DD and the segment one of three words: safe in a file name.
  const type = key.format === "arrow" ? ARROW_STREAM_TYPE : key.format === "csv-excel" ? CSV_EXCEL_TYPE : CSV_TYPE;
  return { ...BASE_HEADERS, "content-type": type, "content-disposition": `attachment; filename="${key.fileName}"`, vary: "Accept" };
}

/** The body of the 200 for `answer`: the rendered answer as it is, or the rows in `format` (the question's). */
export function rowsSource(answer: ProductCostRead, format: AnswerKey["format"], exchange: Pick<Exchange, "rows">): ChunkStream {
  if (answer.kind === "rendered") return encodedRows(answer.read, exchange, RENDERED_JSON);
  if (format === "csv") return encodedRows(answer.read, exchange, CSV_TABLE);
  if (format === "csv-excel") return encodedRows(answer.read, exchange, CSV_EXCEL_TABLE);
  if (format === "arrow") return encodedRows(answer.read, exchange, arrowStream());
  return encodedRows(answer.read, exchange, JSON_ARRAY);
}

// Product cost rows as body chunks in an encoding (a JSON array, or CSV). The first batch is
// already fetched when this runs (so the 200 is only sent for a query that works); a later
// batch that fails ends the chunks with its error, and body.ts breaks the transfer off.

const encoder = new TextEncoder();

/** How a batch becomes body bytes: `begin` with the first batch, `more` for each later one, then `end`. */
export interface RowEncoding<T = ProductCostRow> {
  begin(items: readonly T[]): string | Uint8Array;
  /** `written` = how many rows are already in the body (a JSON array needs a comma after the first). */
  more(items: readonly T[], written: number): string | Uint8Array;
  end: string | Uint8Array;
  /** How many rows a batch holds (for the log and metrics). */
  rows(items: readonly T[]): number;
}

export const JSON_ARRAY: RowEncoding = {
  begin: (rows) => rowsJson(rows, "["),
  more: (rows, written) => rowsJson(rows, written === 0 ? "" : ","),
  end: "]",
  rows: (rows) => rows.length,
};

const OPEN_BRACKET = encoder.encode("[");

/** The chunks of a rendered answer: each already holds its rows and the commas between them, in UTF-8. */
export const RENDERED_JSON: RowEncoding<RenderedChunk> = {
  begin: (chunks) => Buffer.concat([OPEN_BRACKET, ...chunks.map(([, body]) => body)]),
  more: (chunks) => Buffer.concat(chunks.map(([, body]) => body)),
  end: "]",
  rows: (chunks) => chunks.reduce((n, [rows]) => n + Number(Buffer.from(rows).toString("latin1")), 0),
};

const bytes = (body: string | Uint8Array) => (typeof body === "string" ? encoder.encode(body) : body);

/**
 * The body's chunks for `read`: the first from the batch already fetched, then one per later
 * batch, then the end. A failure of the read propagates (the body then breaks off); the rows
 * written so far are counted in `exchange.rows` for the log line and metrics.
 */
export function encodedRows<T>(read: Read<T>, exchange: Pick<Exchange, "rows">, encoding: RowEncoding<T>): ChunkStream {
  let written: number | undefined; // rows in the body so far; undefined before the first chunk
  let ended = false;
  return {
    async next() {
      if (written === undefined) {
        written = exchange.rows = encoding.rows(read.first);
        return bytes(encoding.begin(read.first));
      }
      while (!ended) {
        const batch = await read.next();
        if (!batch) {
          ended = true;
          return encoding.end ? bytes(encoding.end) : undefined;
        }
        if (batch.length === 0) continue;
        const chunk = bytes(encoding.more(batch, written));
        written = exchange.rows = written + encoding.rows(batch);
        return chunk;
      }
      return undefined;
    },
    close: (reason) => read.close(reason),
  };
}

// Writes product cost rows as JSON straight from the bytes PostgreSQL sent (ProductCostRow),
// without decoding them to strings and encoding them back. Ids and amounts are exact
// decimal text, spliced in as JSON numbers untouched (no Number() anywhere, so 2^63-1 and
// 99999999999999.999999 survive). Text fields are escaped byte by byte exactly as
// JSON.stringify (and the FastAPI original's json.dumps with ensure_ascii=False) escape
// them: `"` and `\`, the short forms \b \f \n \r \t, \u00xx for the other bytes below 0x20,
// and every other byte copied. That is enough for valid UTF-8, which all PostgreSQL text is.


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

// Writes product cost rows as CSV (RFC 4180) for people who pull costs into a spreadsheet:
// a header line, CRLF line ends, a cell quoted only when it holds a comma, a quote, CR or
// LF (quotes doubled). A null is an empty cell and an empty string is "", so the two stay
// apart, as in PostgreSQL's COPY ... CSV. Ids and amounts are the exact decimal text from
// PostgreSQL, as in the JSON: no Number() anywhere. Like the JSON above, it copies the bytes
// PostgreSQL sent (UTF-8) instead of decoding them.
//
// The Excel-safe variant (Accept: text/csv; variant=excel) differs in two ways only: a UTF-8
// byte order mark first, without which Excel reads the bytes in the machine's code page and
// garbles every non-ASCII name; and a text cell that begins with =, +, -, @, tab or CR, which
// a spreadsheet runs as a formula (OWASP's "CSV injection"), is written as OWASP recommends:
// quoted, behind a single quote, so it shows as the text it is. Amounts are numbers, never
// escaped: a negative amount stays a number.

export const CSV_HEADER = PRODUCT_COST_COLUMNS.join(",") + "\r\n";

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
