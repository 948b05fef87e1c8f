// Product cost rows as body chunks in an encoding (a JSON array, or CSV). The first batch is
// already fetched when this runs (so the 200 is only sent for a query that works); a later
// batch that fails ends the chunks with its error, and body.ts breaks the transfer off.

import type { ProductCostRow, RenderedChunk } from "../reads/answer-rows.ts";
import type { Read } from "../reads/read.ts";
import type { ChunkStream } from "./chunk-stream.ts";
import type { Exchange } from "../request/exchange.ts";
import { rowsJson } from "./row-json.ts";

const encoder = new TextEncoder();

/** How a batch becomes body bytes: `begin` with the first batch, `more` for each later one, then `end`. */
export interface RowEncoding<T = ProductCostRow> {
  begin(items: readonly T[]): string | Uint8Array;
  /** `written` = how many rows are already in the body (a JSON array needs a comma after the first). */
  more(items: readonly T[], written: number): string | Uint8Array;
  end: string;
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
