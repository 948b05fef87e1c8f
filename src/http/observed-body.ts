// How a streamed response body ended, seen from the outside, for the request's log line and
// metrics: written to the end, cut off because the client went away, or failed on the
// server's side; and how many bytes were handed to the server to send (after compression).
// A body that fails keeps failing outward, so the server aborts the connection: the client
// sees a broken transfer, never a shorter body that looks whole.

export type BodyEnd = "complete" | "client_closed" | "failed";

export interface BodyOutcome {
  end: BodyEnd;
  /** Body bytes sent; undefined when not known (a body the service did not build itself). */
  bytes: number | undefined;
}

/**
 * `body`, passed through unchanged, and a promise of how it ended. `clientGone` is the
 * request's own signal: a body that fails after the client left failed because it left.
 */
export function observeBody(
  body: ReadableStream<Uint8Array>,
  clientGone: AbortSignal,
): { body: ReadableStream<Uint8Array>; outcome: Promise<BodyOutcome> } {
  const reader = body.getReader();
  let bytes = 0;
  let report!: (outcome: BodyOutcome) => void;
  const outcome = new Promise<BodyOutcome>((resolve) => (report = resolve));
  let ended = false;
  const end = (how: BodyEnd) => {
    if (ended) return;
    ended = true;
    report({ end: how, bytes });
  };

  const observed = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch {
          end(clientGone.aborted ? "client_closed" : "failed");
          // With no value: the cause is in the request's context for its log line, and Bun
          // would otherwise print it, source lines and all, to stderr.
          controller.error(undefined);
          return;
        }
        if (next.done) {
          controller.close();
          end("complete");
          return;
        }
        bytes += next.value.byteLength;
        controller.enqueue(next.value);
      },
      async cancel(reason) {
        end("client_closed");
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
  return { body: observed, outcome };
}
