// Streams product cost rows as one JSON array. The first batch is already fetched
// when this runs (so the 200 is only sent for a query that works). If a later batch
// fails, the stream errors, and the server aborts the connection instead of ending the
// chunked body: the client sees a broken transfer, never a short array that looks whole.

import type { RowBatches } from "../db/product-costs.ts";
import type { RequestContext } from "./request-context.ts";
import { rowsJson } from "./row-json.ts";

const encoder = new TextEncoder();

export function jsonRowStream(batches: RowBatches, context: RequestContext): ReadableStream<Uint8Array> {
  let rows = batches.first.length;
  let settle!: () => void;
  context.bodyDone = new Promise<void>((resolve) => (settle = resolve));
  const finish = (error?: unknown) => {
    context.rows = rows;
    if (error !== undefined) context.error = error;
    settle();
  };
  const rest = batches.rest();
  let opened = false;

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (!opened) {
          opened = true;
          controller.enqueue(encoder.encode("[" + rowsJson(batches.first)));
          return;
        }
        const next = await rest.next();
        if (next.done) {
          controller.enqueue(encoder.encode("]"));
          controller.close();
          finish();
          return;
        }
        if (next.value.length === 0) return;
        const prefix = rows === 0 ? "" : ",";
        rows += next.value.length;
        controller.enqueue(encoder.encode(prefix + rowsJson(next.value)));
      } catch (err) {
        controller.error(err);
        await batches.close();
        finish(err);
      }
    },
    async cancel(reason) {
      // The client went away: stop reading, close the cursor, free the connection.
      await rest.return(undefined).catch(() => {});
      await batches.close();
      finish(reason ?? new Error("client disconnected"));
    },
  });
}
