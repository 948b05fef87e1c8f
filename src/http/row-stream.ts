// Streams product cost rows in an encoding (a JSON array, or CSV). The first batch is already fetched
// when this runs (so the 200 is only sent for a query that works). If a later batch
// fails, the stream errors, and the server aborts the connection instead of ending the
// chunked body: the client sees a broken transfer, never a short array that looks whole.
// The request's context counts the rows written and keeps the cause of a failure; the
// handler sees how the body ended (observed-body.ts).

import type { ProductCostRow, RenderedChunk, RowBatches } from "../db/product-costs.ts";
import type { RequestContext } from "./request-context.ts";
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

export function rowStream<T>(batches: RowBatches<T>, context: RequestContext, encoding: RowEncoding<T>): ReadableStream<Uint8Array> {
  context.streamed = true;
  context.rows = 0; // rows written to the body so far
  const rest = batches.rest();
  let opened = false;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!opened) {
          opened = true;
          controller.enqueue(bytes(encoding.begin(batches.first)));
          context.rows = encoding.rows(batches.first);
          return;
        }
        const next = await rest.next();
        if (next.done) {
          if (encoding.end) controller.enqueue(bytes(encoding.end));
          controller.close();
          return;
        }
        if (next.value.length === 0) return;
        const written = context.rows ?? 0;
        controller.enqueue(bytes(encoding.more(next.value, written)));
        context.rows = written + encoding.rows(next.value);
      } catch (err) {
        // Erroring the stream makes Bun abort the connection without the last chunk. The
        // cause goes to the request's log line; erroring with no value keeps Bun from also
        // printing it, source lines and all, to stderr.
        context.error = err;
        controller.error(undefined);
        await batches.close(err);
      }
    },
    async cancel(reason) {
      // The client went away: close the read first (a batch in flight is cancelled, the
      // cursor closed, the connection freed), then the generator, which waits for that batch.
      await batches.close(reason ?? new Error("client disconnected"));
      await rest.return(undefined).catch(() => {});
    },
  });
}
