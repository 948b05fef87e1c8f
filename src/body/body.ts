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
// The request's signal (server.ts: the client gone, or REQUEST_TIMEOUT_MS) cuts it wherever
// it stands; the source is then closed (a statement cancelled, the cursor closed).

import { ClientClosedRequestError } from "../failures.ts";
import type { ChunkStream } from "./chunk-stream.ts";
import { addVary, compressor, MIN_COMPRESSED_BYTES } from "./compression.ts";
import type { ContentCoding } from "../query/accept-encoding.ts";
import type { CachedAnswer, KeptFile } from "./kept-file.ts";
import type { BufferBudget } from "./read-ahead.ts";
import type { BodyEnd, BodyOutcome } from "../request/exchange.ts";
import { okResponse } from "../request/responses.ts";

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
  // The first chunk is the first batch, already in memory: reading it waits for nothing. From
  // here the source is this body's to close, whatever ends it.
  const first = await source.next().catch((err: unknown) => {
    void source.close(err).catch(() => {});
    throw err;
  });
  const coding = options.wanted && first && first.byteLength >= MIN_COMPRESSED_BYTES ? options.wanted : null;
  if (coding) h.set("content-encoding", coding);
  const sent = bodyStream(first, source, coding, options);
  await sent.readAhead; // throws what stopped the read before any byte was sent
  return { response: okResponse(sent.body, h), coding, outcome: sent.outcome };
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
    return { response: okResponse(bytes, h), coding, outcome: Promise.resolve<BodyOutcome>({ end: "complete", bytes: bytes.byteLength }) };
  }
  const bytes = onTheFly ? file.reader(source.kept.chunkSizes) : file.reader();
  const sent = bodyStream(undefined, bytes, onTheFly ? coding : null, { ...options, budget: undefined });
  await sent.readAhead;
  return { response: okResponse(sent.body, h), coding, outcome: sent.outcome };
}

function bodyStream(first: Uint8Array | undefined, rest: ChunkStream | undefined, coding: "br" | "gzip" | null, options: SendOptions) {
  return new BodyStream(first, rest, coding, options);
}

/**
 * One body's states; `end` is the only way into the last, once:
 *   reading   produced ahead before any byte goes out: a failure rejects `readAhead`, so the
 *             caller answers for it and the body is dropped unread;
 *   sending   handed out (`readAhead` settled once the producer first waits for the client, or
 *             has produced everything): produced ahead into this answer's share of the budget,
 *             else at the client's pace;
 *   produced  every byte is queued, or the failure that ends the body after it was handed out:
 *             the client drains the queue, then the body completes or breaks off;
 *   ended     complete, client_closed or failed, reported once; a body cut short (the request's
 *             signal, the client's cancel, a failure) closes its source and gives back its memory.
 */
type BodyState = "reading" | "sending" | "produced" | "ended";

class BodyStream {
  readonly body: ReadableStream<Uint8Array>;
  readonly outcome: Promise<BodyOutcome>;
  /** Settles when the body is handed out (see "sending"); rejects with what stopped it before. */
  readonly readAhead: Promise<void>;
  private state: BodyState = "reading";
  private readonly z: ReturnType<typeof compressor> | undefined;
  private readonly ahead: boolean;
  /** This answer's share of the read-ahead budget. */
  private readonly ownMax: number;
  private readonly queue: Uint8Array[] = [];
  private queued = 0;
  private bytes = 0;
  /** The first chunk, read before the body was made. */
  private pending: Uint8Array | undefined;
  /** What ended the source after the body was handed out: the client gets the queue, then a broken transfer. */
  private failure: { error: unknown } | undefined;
  private clientWaiting = false;
  // Each resolves the wait of its side, if it waits (resolving a settled wait does nothing).
  private wakeClient: () => void = () => {};
  private wakeProducer: () => void = () => {};
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  private report!: (outcome: BodyOutcome) => void;
  private handedOut!: () => void;
  private notHandedOut!: (error: unknown) => void;
  private readonly onAbort = () => this.aborted();

  constructor(
    first: Uint8Array | undefined,
    private readonly rest: ChunkStream | undefined,
    coding: "br" | "gzip" | null,
    private readonly options: SendOptions,
  ) {
    const { budget, signal } = options;
    this.pending = first;
    this.z = coding ? compressor(coding) : undefined;
    this.ahead = budget !== undefined && budget.maxBytes > 0;
    this.ownMax = this.ahead ? budget!.maxBytes / 4 : 0;
    this.outcome = new Promise<BodyOutcome>((resolve) => (this.report = resolve));
    this.readAhead = new Promise<void>((resolve, reject) => {
      this.handedOut = resolve;
      this.notHandedOut = reject;
    });
    this.readAhead.catch(() => {}); // a rejection is the caller's, when it awaits
    this.body = new ReadableStream<Uint8Array>(
      {
        start: (c) => {
          this.controller = c;
        },
        pull: (c) => this.pull(c),
        cancel: (reason) => {
          if (this.state === "ended") return;
          this.end("client_closed", undefined, reason ?? new ClientClosedRequestError());
        },
      },
      { highWaterMark: 0 },
    );
    if (signal.aborted) queueMicrotask(this.onAbort);
    else signal.addEventListener("abort", this.onAbort, { once: true });
    void this.produce();
  }

  /** Produces while the client waits on an empty queue, or ahead of it while this answer's share and the whole budget have room. */
  private async produce(): Promise<void> {
    const budget = this.options.budget;
    try {
      while (this.state === "reading" || this.state === "sending") {
        while (!(this.clientWaiting && this.queue.length === 0) && !(this.ahead && this.queued < this.ownMax && budget!.hasRoom())) {
          this.handOut();
          const room = new Promise<void>((resolve) => (this.wakeProducer = resolve));
          await (this.ahead ? Promise.race([room, budget!.nextRoom()]) : room);
          if (this.isEnded()) return;
        }
        await this.step();
        this.wakeClient();
      }
    } catch (error) {
      if (this.state === "ended") return;
      // Nothing sent: the caller answers for it.
      if (this.state === "reading") return this.end("failed", error, error);
      this.failure = { error };
      this.state = "produced";
      this.z?.destroy();
      void this.rest?.close(error).catch(() => {});
      this.wakeClient();
    }
  }

  /** One step: the next identity chunk, compressed when asked, into the queue. */
  private async step(): Promise<void> {
    const next = this.pending ?? (await this.rest?.next());
    this.pending = undefined;
    if (this.state === "ended") return;
    const chunks = next === undefined ? (this.z ? await this.z.end() : []) : this.z ? await this.z.write(next) : [next];
    if (this.isEnded()) return; // cut while compressing: nothing more is queued
    for (const chunk of chunks) {
      if (chunk.byteLength === 0) continue;
      this.queue.push(chunk);
      this.queued += chunk.byteLength;
      this.options.budget?.take(chunk.byteLength);
    }
    if (next === undefined) {
      this.handOut();
      this.state = "produced";
    }
  }

  /** Read after an await: the body may have been cut meanwhile. */
  private isEnded(): boolean {
    return this.state === "ended";
  }

  private handOut(): void {
    if (this.state !== "reading") return;
    this.state = "sending";
    this.handedOut();
  }

  private async pull(c: ReadableStreamDefaultController<Uint8Array>): Promise<void> {
    while (this.queue.length === 0 && (this.state === "reading" || this.state === "sending")) {
      this.clientWaiting = true;
      this.wakeProducer();
      await new Promise<void>((resolve) => (this.wakeClient = resolve));
    }
    this.clientWaiting = false;
    if (this.state === "ended") return;
    const chunk = this.queue.shift();
    if (chunk) {
      this.queued -= chunk.byteLength;
      this.options.budget?.give(chunk.byteLength);
      this.bytes += chunk.byteLength;
      c.enqueue(chunk);
      this.wakeProducer();
      return;
    }
    if (this.failure) {
      this.end("failed", this.failure.error);
      c.error(undefined);
      return;
    }
    c.close();
    this.end("complete");
  }

  /** The request's signal: the client gone, or the deadline (its reason says which), wherever the body stands. */
  private aborted(): void {
    if (this.state === "ended") return;
    const reason = this.options.signal.reason;
    this.end(reason instanceof ClientClosedRequestError ? "client_closed" : "failed", reason, reason);
    // With no value: the cause goes to the request's log line, and Bun would otherwise print
    // it, source lines and all, to stderr.
    try {
      this.controller.error(undefined);
    } catch {
      // already closed
    }
    this.wakeClient();
  }

  /**
   * The one way out, once: reported with its cause; a body not handed out yet rejects
   * `readAhead` with it; one cut short (`cut`: why) stops producing, gives back its memory and
   * closes its source (a statement cancelled, a cursor closed, a kept file let go).
   */
  private end(end: BodyEnd, error?: unknown, cut?: unknown): void {
    if (this.state === "ended") return;
    const wasReading = this.state === "reading";
    this.state = "ended";
    this.options.signal.removeEventListener("abort", this.onAbort);
    if (wasReading) this.notHandedOut(error);
    this.report({ end, bytes: this.bytes, ...(error !== undefined ? { error } : {}) });
    if (cut === undefined) return; // complete, or the failure's own path closed the source
    this.z?.destroy();
    this.options.budget?.give(this.queued);
    this.queue.length = 0;
    this.queued = 0;
    this.wakeProducer();
    void this.rest?.close(cut ?? error).catch(() => {});
  }
}
