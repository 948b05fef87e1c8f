// How a streamed response body ended, seen from the outside, for the request's log line and
// metrics: written to the end, cut off because the client went away, or failed on the
// server's side (the rows failed, or the whole-request deadline passed first); and how many
// bytes were handed to the server to send (after compression). A body that fails keeps
// failing outward, so the server aborts the connection: the client sees a broken transfer,
// never a shorter body that looks whole.

export type BodyEnd = "complete" | "client_closed" | "failed";

export interface BodyOutcome {
  end: BodyEnd;
  /** Body bytes sent; undefined when not known (a body the service did not build itself). */
  bytes: number | undefined;
}

export interface ObserveOptions {
  /** The request's own signal: a body that fails after the client left failed because it left. */
  clientGone: AbortSignal;
  /** Milliseconds from now until the body must be complete (REQUEST_TIMEOUT_MS left); 0 or absent: no limit. */
  deadlineMs?: number;
  /** Called when the deadline cuts the body; returns the reason (for the log and the source's cancel). */
  onDeadline?: () => unknown;
}

/** `body`, passed through unchanged, and a promise of how it ended. */
export function observeBody(body: ReadableStream<Uint8Array>, options: ObserveOptions): { body: ReadableStream<Uint8Array>; outcome: Promise<BodyOutcome> } {
  const reader = body.getReader();
  let bytes = 0;
  let report!: (outcome: BodyOutcome) => void;
  const outcome = new Promise<BodyOutcome>((resolve) => (report = resolve));
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = (how: BodyEnd) => {
    if (ended) return;
    ended = true;
    clearTimeout(timer);
    report({ end: how, bytes });
  };
  // With no value: the cause is in the request's context for its log line, and Bun would
  // otherwise print it, source lines and all, to stderr.
  const fail = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    try {
      controller.error(undefined);
    } catch {
      // already closed or errored
    }
  };

  const observed = new ReadableStream<Uint8Array>(
    {
      start(controller) {
        if (!options.deadlineMs || options.deadlineMs <= 0) return;
        timer = setTimeout(() => {
          if (ended) return;
          const reason = options.onDeadline?.();
          end("failed");
          fail(controller);
          void reader.cancel(reason).catch(() => {});
        }, options.deadlineMs);
      },
      async pull(controller) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch {
          end(options.clientGone.aborted ? "client_closed" : "failed");
          fail(controller);
          return;
        }
        if (ended) return; // cut by the deadline while this chunk was on its way
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
