// Streams product cost rows in an encoding (a JSON array, or CSV). The first batch is already fetched
// when this runs (so the 200 is only sent for a query that works). If a later batch
// fails, the stream errors, and the server aborts the connection instead of ending the
// chunked body: the client sees a broken transfer, never a short array that looks whole.
// The request's context counts the rows written and keeps the cause of a failure; the
// handler sees how the body ended (observed-body.ts).

import type { ProductCostRow, RowBatches } from "../db/product-costs.ts";
import type { RequestContext } from "./request-context.ts";
import { rowsJson } from "./row-json.ts";

const encoder = new TextEncoder();

/** How rows become body text: `begin` with the first batch, `more` for each later one, then `end`. */
export interface RowEncoding {
  begin(rows: readonly ProductCostRow[]): string;
  /** `written` = how many rows are already in the body (a JSON array needs a comma after the first). */
  more(rows: readonly ProductCostRow[], written: number): string;
  end: string;
}

export const JSON_ARRAY: RowEncoding = {
  begin: (rows) => "[" + rowsJson(rows),
  more: (rows, written) => (written === 0 ? "" : ",") + rowsJson(rows),
  end: "]",
};

export function rowStream(batches: RowBatches, context: RequestContext, encoding: RowEncoding): ReadableStream<Uint8Array> {
  context.streamed = true;
  context.rows = 0; // rows written to the body so far
  const rest = batches.rest();
  let opened = false;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!opened) {
          opened = true;
          controller.enqueue(encoder.encode(encoding.begin(batches.first)));
          context.rows = batches.first.length;
          return;
        }
        const next = await rest.next();
        if (next.done) {
          if (encoding.end) controller.enqueue(encoder.encode(encoding.end));
          controller.close();
          return;
        }
        if (next.value.length === 0) return;
        const written = context.rows ?? 0;
        controller.enqueue(encoder.encode(encoding.more(next.value, written)));
        context.rows = written + next.value.length;
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
