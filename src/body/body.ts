// The one stream every 200 body goes out through. Its source is the answer's identity bytes:
// chunks read on demand (the rows, encoded), or a kept answer (answer-cache.ts: read back
// from its file, or from the file of its compressed variant). On the way it
//   - reads ahead of a slow client into the shared budget (below), so the read ends
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
import type { ContentCoding } from "../query/answer-key.ts";
import type { CachedAnswer, KeptFile } from "./kept-file.ts";
import { okResponse, type BodyEnd, type BodyOutcome } from "../request/exchange.ts";
import zlib from "node:zlib";

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

// The memory answers are read into ahead of their clients (body.ts reads them), so that a
// slow client holds memory and a socket but not a database connection: the rows are read as
// fast as PostgreSQL hands them over, the cursor ends and the connection goes back to the
// pool, and the client takes the bytes at its own pace.
//
// Memory stays bounded: all answers together hold at most the budget's size (an answer may
// overshoot by the one chunk it is reading), and one answer at most a quarter of it. When
// there is no room, an answer is read at its client's pace again, holding its connection, as
// before: under enough slow clients the service degrades to streaming, never to unbounded
// memory.

export interface BufferBudget {
  /** Whether another chunk may be read ahead now. */
  hasRoom(): boolean;
  take(bytes: number): void;
  give(bytes: number): void;
  /** Resolves the next time bytes are given back. */
  nextRoom(): Promise<void>;
  /** Bytes held ahead of clients right now, for metrics and tests. */
  used(): number;
  readonly maxBytes: number;
}

export function createBufferBudget(maxBytes: number): BufferBudget {
  let used = 0;
  let waiters: (() => void)[] = [];
  return {
    maxBytes,
    hasRoom: () => used < maxBytes,
    take(bytes) {
      used += bytes;
    },
    give(bytes) {
      used -= bytes;
      const woken = waiters;
      waiters = [];
      woken.forEach((wake) => wake());
    },
    nextRoom: () => new Promise<void>((resolve) => waiters.push(resolve)),
    used: () => used,
  };
}

// The compressor body.ts runs a 200 through, in the coding the client accepts (src/query/negotiation.ts).
//
// Rule: a 200 with a body, when Accept-Encoding allows br or gzip (q > 0, `*` counts) and
// the first chunk (the first batch of rows, already fetched) is at least 1 KiB. br is
// preferred on a tie. Anything else goes out as it is: error bodies, which must stay byte
// for byte what FastAPI sends, and small answers ("[]", a few rows), where compression
// adds bytes and time. Every 200 that passes here says Vary: Accept-Encoding.
//
// Levels, measured on a one-month answer (9.9 MB of JSON, 45,000 rows) on the 2-core
// benchmark machine: brotli quality 1 takes 55 ms for 2.0 MB; gzip level 1 64 ms for
// 3.1 MB; gzip level 6 (the usual default) 230 ms for 2.0 MB. So br at quality 1 and gzip
// at level 1: a large answer costs less CPU to compress than to serialise.

export const MIN_COMPRESSED_BYTES = 1024;

export const BROTLI_QUALITY = 1;
export const GZIP_LEVEL = 1;

export function addVary(headers: Headers, field: string): void {
  const current = headers.get("vary");
  if (!current) headers.set("vary", field);
  else if (!current.split(",").some((f) => f.trim().toLowerCase() === field.toLowerCase())) headers.set("vary", `${current}, ${field}`);
}

export interface Compressor {
  /** Compresses `chunk`; resolves with what zlib produced so far (maybe nothing yet). */
  write(chunk: Uint8Array): Promise<Uint8Array[]>;
  /** Ends the stream; resolves with the rest. */
  end(): Promise<Uint8Array[]>;
  destroy(): void;
}

/** A zlib stream fed chunk by chunk. No flush between chunks, so the bytes depend only on the input. */
export function compressor(coding: ContentCoding): Compressor {
  const z =
    coding === "br"
      ? zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } })
      : zlib.createGzip({ level: GZIP_LEVEL });
  let out: Uint8Array[] = [];
  let failure: unknown;
  z.on("data", (chunk: Buffer) => out.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
  z.on("error", (err) => (failure = err));
  const ended = new Promise<void>((resolve) => z.once("end", resolve));
  const take = () => {
    if (failure) throw failure;
    const produced = out;
    out = [];
    return produced;
  };
  return {
    // write()'s callback runs once zlib has processed the chunk and pushed what it produced.
    write: (chunk) => new Promise((resolve, reject) => z.write(chunk, (err) => (err ? reject(err) : resolve(take())))),
    async end() {
      z.end();
      await ended;
      return take();
    },
    destroy: () => z.destroy(),
  };
}
