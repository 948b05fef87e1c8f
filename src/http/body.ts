// The one stream every 200 body goes out through. Its source is the answer's identity bytes:
// chunks read on demand (the rows, encoded), or a kept answer (answer-cache.ts: read back
// from its file, or from the file of its compressed variant). On the way it
//   - reads ahead of a slow client into the shared budget (read-ahead.ts), so the read ends
//     and its database connection is freed while the client takes the bytes at its pace;
//   - compresses (compression.ts) when the client accepts it and the first chunk is 1 KiB;
//   - counts the bytes handed to the server, and reports how the body ended: complete,
//     client_closed (the client went away) or failed (the source failed, or the request's
//     deadline passed), with the cause.
// The 200 goes out only once its answer is read whole, or once this answer's share of the
// read-ahead budget is full (then the rest follows at the client's pace): a database fault
// while it is read (a restart, a session ended, a standby's recovery conflict) is thrown to the
// caller, which may read again or answer 503, instead of cutting a transfer already begun.
// A body that fails later errors the stream, so Bun aborts the connection: the client sees a
// broken transfer (an unfinished gzip or brotli stream), never a shorter body that looks whole.
// The request's signal (handler.ts: the client gone, or REQUEST_TIMEOUT_MS) cuts it wherever
// it stands; the source is then closed (a statement cancelled, the cursor closed).

import { ClientClosedRequestError } from "../failures.ts";
import type { CachedAnswer } from "./answer-cache.ts";
import type { ChunkStream } from "./chunk-stream.ts";
import { addVary, compressor, MIN_COMPRESSED_BYTES, type ContentCoding } from "./compression.ts";
import type { KeptFile } from "./kept-file.ts";
import type { BufferBudget } from "./read-ahead.ts";

export type BodyEnd = "complete" | "client_closed" | "failed";

export interface BodyOutcome {
  end: BodyEnd;
  /** Body bytes sent; undefined when not known (a body the service did not build itself). */
  bytes: number | undefined;
  /** Why a body failed, for the log line. */
  error?: unknown;
}

/** A 200's identity bytes: read as they are sent, or kept whole already (with its variants, made once). */
export type BodySource = ChunkStream | { kept: CachedAnswer; encoded: (coding: ContentCoding) => Promise<KeptFile> };

export interface SendOptions {
  /** The coding the client's Accept-Encoding prefers (compression.ts), null for identity. */
  wanted: ContentCoding | null;
  /** The request's: aborted when the client goes away or the deadline passes; its reason says which. */
  signal: AbortSignal;
  /** Memory to read ahead into; none: read at the client's pace. */
  budget?: BufferBudget;
}

/**
 * A kept body this small goes out whole, read at once (microseconds from the page cache), with
 * a Content-Length, as when kept answers were held in memory and Bun found them whole.
 */
const SMALL_KEPT_BYTES = 64 * 1024;

/** The 200 with `headers` and the body of `source`, the coding it goes out in, and how that body ends. */
export async function sendOk(
  headers: Record<string, string>,
  source: BodySource,
  options: SendOptions,
): Promise<{ response: Response; coding: ContentCoding | null; outcome: Promise<BodyOutcome> }> {
  const h = new Headers(headers);
  addVary(h, "Accept-Encoding");
  if ("kept" in source) {
    // Held from here (found in the cache in this same turn) to the last byte: a write may drop
    // the answer meanwhile, and its files (its variants too) are closed only once let go.
    const release = source.kept.body.hold();
    try {
      const sent = await sendKept(h, source, options);
      void sent.outcome.finally(release);
      return sent;
    } catch (err) {
      release();
      throw err;
    }
  }
  // The first chunk is the first batch, already in memory: reading it waits for nothing.
  const first = await source.next();
  const coding = options.wanted && first && first.byteLength >= MIN_COMPRESSED_BYTES ? options.wanted : null;
  if (coding) h.set("content-encoding", coding);
  const sent = bodyStream(first, source, coding, options);
  await sent.readAhead; // throws what stopped the read before any byte was sent
  return { response: new Response(sent.body, { status: 200, headers: h }), coding, outcome: sent.outcome };
}

/**
 * A kept answer, compressed as its first read was (by the size of its first chunk). Read back
 * from a file as the client takes it: nothing to read ahead, so no share of the read-ahead budget.
 */
async function sendKept(h: Headers, source: Extract<BodySource, { kept: CachedAnswer }>, options: SendOptions) {
  const coding = options.wanted && (source.kept.chunkSizes[0] ?? 0) >= MIN_COMPRESSED_BYTES ? options.wanted : null;
  if (coding) h.set("content-encoding", coding);
  // A variant that could not be made (a full disk) is compressed on the way instead.
  const variant = coding ? await source.encoded(coding).catch(() => undefined) : undefined;
  const onTheFly = coding !== null && !variant;
  const file = variant ?? source.kept.body;
  if (!onTheFly && file.size <= SMALL_KEPT_BYTES) {
    const bytes = file.bytes();
    return { response: new Response(bytes, { status: 200, headers: h }), coding, outcome: Promise.resolve<BodyOutcome>({ end: "complete", bytes: bytes.byteLength }) };
  }
  const bytes = onTheFly ? file.reader(source.kept.chunkSizes) : file.reader();
  const sent = bodyStream(undefined, bytes, onTheFly ? coding : null, { ...options, budget: undefined });
  await sent.readAhead;
  return { response: new Response(sent.body, { status: 200, headers: h }), coding, outcome: sent.outcome };
}

function bodyStream(first: Uint8Array | undefined, rest: ChunkStream | undefined, coding: "br" | "gzip" | null, { signal, budget }: SendOptions) {
  const z = coding ? compressor(coding) : undefined;
  const ahead = budget !== undefined && budget.maxBytes > 0;
  const ownMax = ahead ? budget.maxBytes / 4 : 0;
  const queue: Uint8Array[] = [];
  let queued = 0;
  let pending: Uint8Array | undefined = first;
  let produced = false; // every byte of the body is in the queue
  let failure: { error: unknown } | undefined;
  let stopped = false;
  let clientWaiting = false;
  // Each resolves the wait of its side, if it waits (resolving a settled wait does nothing).
  let wakeClient: () => void = () => {};
  let wakeProducer: () => void = () => {};
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  let bytes = 0;
  let report!: (outcome: BodyOutcome) => void;
  const outcome = new Promise<BodyOutcome>((resolve) => (report = resolve));
  let ended = false;
  // Settles once the producer first waits for the client (all read, or this answer's share of
  // the budget full, or no budget at all): until then no byte has gone out, so a failure
  // rejects it and the body is never handed to Bun.
  let readAheadDone = false;
  let endReadAhead!: () => void;
  let failReadAhead!: (error: unknown) => void;
  const readAhead = new Promise<void>((resolve, reject) => {
    endReadAhead = () => ((readAheadDone = true), resolve());
    failReadAhead = (error) => ((readAheadDone = true), reject(error));
  });
  readAhead.catch(() => {}); // a rejection is the caller's, when it awaits

  const enqueue = (chunks: Uint8Array[]) => {
    for (const chunk of chunks) {
      if (chunk.byteLength === 0) continue;
      queue.push(chunk);
      queued += chunk.byteLength;
      budget?.take(chunk.byteLength);
    }
  };
  // One step: the next identity chunk, compressed when asked, into the queue.
  const step = async () => {
    const next = pending ?? (await rest?.next());
    pending = undefined;
    if (stopped) return;
    if (next === undefined) {
      if (z) enqueue(await z.end());
      produced = true;
    } else {
      enqueue(z ? await z.write(next) : [next]);
    }
  };
  // Produces while the client waits on an empty queue, or ahead of it while this answer's
  // share and the whole budget have room; otherwise at the client's pace.
  const produce = async () => {
    try {
      while (!produced && !stopped) {
        while (!stopped && !(clientWaiting && queue.length === 0) && !(ahead && queued < ownMax && budget.hasRoom())) {
          endReadAhead();
          const room = new Promise<void>((resolve) => (wakeProducer = resolve));
          await (ahead ? Promise.race([room, budget.nextRoom()]) : room);
        }
        if (stopped) return;
        await step();
        wakeClient();
      }
      endReadAhead();
    } catch (error) {
      if (!readAheadDone) {
        // Nothing sent: the caller answers for it. The stream is dropped unread.
        failReadAhead(error);
        finish("failed", error);
        stop(error);
        return;
      }
      failure = { error };
      produced = true;
      z?.destroy();
      void rest?.close(error).catch(() => {});
      wakeClient();
    }
  };

  const finish = (end: BodyEnd, error?: unknown) => {
    if (ended) return;
    ended = true;
    signal.removeEventListener("abort", onAbort);
    report({ end, bytes, ...(error !== undefined ? { error } : {}) });
  };
  const stop = (reason: unknown) => {
    stopped = true;
    z?.destroy();
    budget?.give(queued);
    queue.length = 0;
    queued = 0;
    wakeProducer();
    void rest?.close(reason).catch(() => {});
  };
  const onAbort = () => {
    if (ended) return;
    const reason = signal.reason;
    failReadAhead(reason); // (nothing, if the body was handed out already)
    finish(reason instanceof ClientClosedRequestError ? "client_closed" : "failed", reason);
    stop(reason);
    // With no value: the cause goes to the request's log line, and Bun would otherwise print
    // it, source lines and all, to stderr.
    try {
      controller.error(undefined);
    } catch {
      // already closed
    }
    wakeClient();
  };
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener("abort", onAbort, { once: true });
  void produce();

  const body = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      async pull(c) {
        while (queue.length === 0 && !produced && !ended) {
          clientWaiting = true;
          wakeProducer();
          await new Promise<void>((resolve) => (wakeClient = resolve));
        }
        clientWaiting = false;
        if (ended) return;
        const chunk = queue.shift();
        if (chunk) {
          queued -= chunk.byteLength;
          budget?.give(chunk.byteLength);
          bytes += chunk.byteLength;
          c.enqueue(chunk);
          wakeProducer();
          return;
        }
        if (failure) {
          finish("failed", failure.error);
          c.error(undefined);
          return;
        }
        c.close();
        finish("complete");
      },
      cancel(reason) {
        if (ended) return;
        finish("client_closed");
        stop(reason ?? new ClientClosedRequestError());
      },
    },
    { highWaterMark: 0 },
  );
  return { body, outcome, readAhead };
}
