// The answer of GET /external/v1/product-costs once the request is checked (app.ts). The
// answer's version comes first (src/reads/answer-version.ts: a few small reads), then, in
// RFC 9110 §13.2.2's order:
//   If-Match names no current ETag         → 412 Precondition Failed, no row read;
//   If-None-Match names the current ETag  → 304 Not Modified, no row read;
//   the answer cache holds this version    → its bytes (each compression made once);
//   otherwise the database read, streamed (body.ts), its bytes kept for the next request; a
//   read that a session's end, a standby's recovery conflict or a lock conflict stops before the first byte is
//   read once more (not kept: the requests waiting for it read for themselves);
//   identical requests arriving meanwhile wait for that read (up to 2 s) instead of making their own.
// Every 200 and 304 says its representation's ETag (entity-tag.ts), Cache-Control: private,
// no-cache (a client may keep the answer and must ask again: a 304 costs one shared small read),
// and X-Data-Changed-At, when a write last changed the range's data (docs/api.md).
// Read from the daily rows directly (src/reads/read-source.ts: no rollup, so no change log to
// version an answer by), a 200 has no ETag and no X-Data-Changed-At, none is kept, If-None-Match
// makes a 304 only as `*` and an If-Match that names a tag a 412: nothing can say the bytes are those.
// The reads it makes, the version's and the rows', are answer-reads.ts's.

import type { AnswerVersion } from "../reads/answer-version.ts";
import { isRetryableRead } from "../database/errors.ts";
import type { AnswerCache } from "./answer-cache.ts";
import type { AnswerReads } from "./answer-reads.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import { sendOk, type BodySource } from "../body/body.ts";
import type { ChunkStream } from "../body/chunk-stream.ts";
import { chooseEncoding, type ContentCoding } from "../query/accept-encoding.ts";
import { matchHolds, noneMatchHits } from "./entity-tag.ts";
import { PRECONDITION_FAILED } from "../failures.ts";
import type { CachedAnswer, KeptFile } from "../body/kept-file.ts";
import type { BufferBudget } from "../body/read-ahead.ts";
import type { Exchange } from "../request/exchange.ts";
import { notModified } from "../request/responses.ts";
import { answerHeaders, rowsSource } from "../body/rows-response.ts";

/**
 * How long a request waits for an identical one's read before reading for itself: a read
 * held back by its slow client (no read-ahead room) must not hold back the others.
 */
const COALESCE_WAIT_MS = 2000;

/** The answer another request is reading, or undefined if it fails, is not kept, or takes too long (or this client leaves). */
async function waitFor(answer: Promise<CachedAnswer | undefined>, signal: AbortSignal): Promise<CachedAnswer | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onAbort: (() => void) | undefined;
  const giveUp = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), COALESCE_WAIT_MS);
    onAbort = () => resolve(undefined);
    signal.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([answer, giveUp]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort!);
  }
}

/** Kept by clients and proxies of one client, always asked again before use. */
export const CACHE_CONTROL = "private, no-cache";

interface AnswerSources extends AnswerReads {
  cache?: AnswerCache;
  /** The build (version and commit): another build may write other bytes. */
  build: string;
  budget?: BufferBudget;
}

export interface ProductCostsAnswerDeps {
  /** The reads of one request's answer, its version's and its rows' (answer-reads.ts). */
  reads: (key: AnswerKey, signal: AbortSignal) => AnswerReads;
  /** Whole answers kept for their version (ANSWER_CACHE_MB); none: every 200 is read from the database. */
  cache?: AnswerCache;
  /** The build (version and commit): another build may write other bytes. */
  build: string;
  /** Memory for answers read ahead of slow clients (read-ahead.ts); none: sent at the client's pace. */
  budget?: BufferBudget;
}

/** The endpoint's answer to a request its route has checked (app.ts). */
export type ProductCostsAnswer = (request: Request, exchange: Exchange, key: AnswerKey) => Promise<Response>;

/** The endpoint's answer: made once, from its reads, the answer cache and the read-ahead budget. */
export function productCostsAnswer(deps: ProductCostsAnswerDeps): ProductCostsAnswer {
  return (request, exchange, key) => answerProductCosts(request, exchange, key, { ...deps.reads(key, exchange.signal), cache: deps.cache, build: deps.build, budget: deps.budget });
}

/** The headers that say which state of the data a 200 or 304 stands for. */
function validatorsOf({ changedAt }: AnswerVersion): Record<string, string> {
  return { "cache-control": CACHE_CONTROL, ...(changedAt ? { "x-data-changed-at": changedAt } : {}) };
}

async function answerProductCosts(request: Request, exchange: Exchange, key: AnswerKey, sources: AnswerSources): Promise<Response> {
  const versioned = await sources.version();
  const wanted = chooseEncoding(request.headers.get("accept-encoding"));
  if (!versioned) return await answerFromDailyRows(request, exchange, key, sources, wanted);
  const { version } = versioned;
  const tag = key.tags(sources.build, version);
  const validators = validatorsOf(versioned);

  // The client's copy is current: the representation it would get now, or its identity form
  // (an answer under 1 KiB goes out uncompressed whatever the client accepts).
  const current = [tag(wanted), ...(wanted ? [tag(null)] : [])];
  if (!matchHolds(request.headers.get("if-match"), current)) throw PRECONDITION_FAILED();
  const matched = noneMatchHits(request.headers.get("if-none-match"), current);
  if (matched) {
    return notModified({ ...validators, etag: matched, vary: "Accept, Accept-Encoding" });
  }

  const cache = sources.cache;
  let kept = cache?.get(key.cached, version);
  let keep: ((answer: CachedAnswer | undefined) => void) | undefined;
  if (!kept && cache) {
    const turn = cache.join(key.cached, version);
    if (turn.leader) keep = turn.done;
    // Found again after the wait (not taken from the promise): it may have been dropped since.
    else if (await waitFor(turn.answer, exchange.signal)) kept = cache.get(key.cached, version, false); // undefined: read it here
  }

  // The 200 says the version its body is at: the kept answer's (the one asked for), or the one
  // read in the rows' own snapshot, which a write committed since the version above moved on.
  const send = (source: BodySource, at: AnswerVersion | null) =>
    sendOk({ ...answerHeaders(key), ...(at ? validatorsOf(at) : { "cache-control": CACHE_CONTROL }) }, source, { wanted, signal: exchange.signal, budget: sources.budget }).then((sent) => {
      if (at) sent.response.headers.set("etag", key.tags(sources.build, at.version)(sent.coding));
      return sent;
    });
  // The rows from the database, sent once read (body.ts), and kept when `done` is given.
  const readAndSend = async (done?: (answer: CachedAnswer | undefined) => void) => {
    let source: ChunkStream;
    let at: AnswerVersion | null;
    let opened: Pick<ChunkStream, "close"> | undefined; // the read, closed here until the body takes it
    try {
      const asked = performance.now();
      const answered = await sources.read(false);
      opened = answered.read.read;
      exchange.firstRowsMs = performance.now() - asked;
      exchange.retriedAfter ??= answered.read.read.retriedAfter;
      const rows = rowsSource(answered.read, key.format, exchange);
      source = rows;
      // The rollup could not be read after all (a table dropped meanwhile): the daily rows
      // answered, exactly, with no version to say what they are.
      at = answered.read.version ?? null;
      if (!at) {
        exchange.source = "daily";
        done?.(undefined);
        done = undefined;
      }
      if (done) {
        const file = cache!.file();
        if (!file) done(undefined); // no file to keep it in: the waiting requests read for themselves
        else {
          const keep = done;
          const { version: keptAt } = at!;
          source = keeping(rows, cache!, file, (chunkSizes) => {
            // Kept under the version of the rows' own snapshot: a request that asked for another
            // (the waiting ones included) does not find it. The waiting requests find the kept
            // entry itself: its compressed forms are shared.
            keep(chunkSizes && cache!.put(key.cached, { version: keptAt, body: file, chunkSizes, rows: exchange.rows ?? 0 }));
          });
        }
      }
    } catch (err) {
      done?.(undefined);
      void opened?.close(err);
      throw err;
    }
    return await send(source, at); // the body's from here: a failure has closed the source (and so given up keeping)
  };

  let sent: Awaited<ReturnType<typeof sendOk>>;
  if (kept) {
    const answer = kept;
    exchange.rows = answer.rows;
    sent = await send({ kept: answer, encoded: (coding) => cache!.encoded(answer, coding) }, versioned);
  } else {
    sent = await onceMoreIfRetryable(exchange, (first) => readAndSend(first ? keep : undefined));
  }
  exchange.streaming(sent.outcome);
  return sent.response;
}

/**
 * `source` as it is, its chunks also written to `file` as they pass: `end` gets their sizes
 * once the source is read to its end and the file is written, undefined otherwise (a failure,
 * a client gone, a full disk, or no room: the cache bounds the bytes of all answers being
 * collected), so that the requests waiting for it read for themselves. The body's end waits
 * for the file: a request sent once this one is answered finds the answer kept.
 */
function keeping(source: ChunkStream, cache: AnswerCache, file: KeptFile, end: (chunkSizes: number[] | undefined) => void): ChunkStream {
  const chunkSizes: number[] = [];
  let wanted = true; // false: not kept (no room, or the read did not end well)
  let held = 0; // reserved in the cache for the file
  let ended = false;
  const finish = async (whole: boolean) => {
    if (ended) return;
    ended = true;
    try {
      if (!(wanted && whole)) throw new Error("not kept");
      await file.written();
      end(chunkSizes);
    } catch {
      file.drop();
      end(undefined);
    } finally {
      cache.release(held);
    }
  };
  return {
    async next() {
      let chunk: Uint8Array | undefined;
      try {
        chunk = await source.next();
      } catch (err) {
        void finish(false);
        throw err;
      }
      if (chunk === undefined) await finish(true);
      else if (wanted && cache.reserve(chunk.byteLength)) {
        held += chunk.byteLength;
        chunkSizes.push(chunk.byteLength);
        file.append(chunk);
      } else wanted = false; // no room: keep none of it
      return chunk;
    },
    close(reason) {
      void finish(false);
      return source.close(reason);
    },
  };
}

/** The answer from the daily rows: no version, so no validator, no 304 and nothing kept. */
async function answerFromDailyRows(request: Request, exchange: Exchange, key: AnswerKey, sources: AnswerSources, wanted: ContentCoding | null): Promise<Response> {
  if (!matchHolds(request.headers.get("if-match"), [])) throw PRECONDITION_FAILED();
  // `*` asks whether an answer exists, which it does once the query is valid (as from the rollup).
  if (request.headers.get("if-none-match")?.trim() === "*") {
    return notModified({ "cache-control": CACHE_CONTROL, vary: "Accept, Accept-Encoding" });
  }
  exchange.source = "daily";
  const send = async () => {
    const asked = performance.now();
    const answered = await sources.read(true);
    exchange.firstRowsMs = performance.now() - asked;
    exchange.retriedAfter ??= answered.read.read.retriedAfter;
    return await sendOk({ ...answerHeaders(key), "cache-control": CACHE_CONTROL }, rowsSource(answered.read, key.format, exchange), { wanted, signal: exchange.signal, budget: sources.budget });
  };
  const sent = await onceMoreIfRetryable(exchange, send);
  exchange.streaming(sent.outcome);
  return sent.response;
}

/**
 * `attempt`, and once more when it failed before sending anything for a reason a new session
 * may not meet: a session the server ended, a standby's recovery conflict or a lock conflict, is read past once,
 * on a session of its own (read.ts does the same for a first batch).
 */
async function onceMoreIfRetryable<T>(exchange: Exchange, attempt: (first: boolean) => Promise<T>): Promise<T> {
  try {
    return await attempt(true);
  } catch (err) {
    if (!isRetryableRead(err) || exchange.signal.aborted) throw err;
    exchange.retriedAfter = err;
    return await attempt(false);
  }
}
