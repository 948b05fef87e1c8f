// The answer, encode and send stages of GET /external/v1/product-costs (src/service/pipeline.ts), once
// its conditions let it through (conditions.ts): the 200 and its body, from
//   the answer cache, when it holds this version (its bytes; each compression made once);
//   otherwise the database read (answer-reads.ts), streamed by body.ts, its bytes kept for the
//   next request (keeping.ts); identical requests arriving meanwhile wait for that read (up to
//   2 s) instead of making their own;
//   read from the daily rows (no version): read, never kept.
// A read that a session's end, a standby's recovery conflict or a lock conflict stops before
// the first byte is read once more, on a new session, once at most: by read.ts while it opens,
// else here while its body is read ahead (then not kept: the requests waiting for it read for
// themselves).
// Every 200 says its representation's ETag and the validators of the version its body is at
// (conditions.ts); one from the daily rows says neither.

import type { AnswerVersion } from "../reads/product-costs.ts";
import { isRetryableRead } from "../database/errors.ts";
import type { AnswerCache } from "./answer-cache.ts";
import type { AnswerReads } from "./answer-reads.ts";
import type { AnswerKey, ContentCoding } from "../query/answer-key.ts";
import { sendOk, type BodySource, type BufferBudget } from "../body/body.ts";
import type { ChunkStream } from "../body/chunk-stream.ts";
import type { CachedAnswer } from "../body/kept-file.ts";
import type { Exchange } from "../request/exchange.ts";
import { answerHeaders, rowsSource } from "../body/encode.ts";
import { validatorsOf } from "./conditions.ts";
import { keeping } from "./keeping.ts";

/** What every answer is made with: the cache it is kept in, the build its tags name, the memory it is read ahead into. */
export interface AnswerParts {
  /** Whole answers kept for their version (ANSWER_CACHE_MB); none: every 200 is read from the database. */
  cache?: AnswerCache;
  /** The build (version and commit): another build may write other bytes. */
  build: string;
  /** Memory for answers read ahead of slow clients (body/body.ts); none: sent at the client's pace. */
  budget?: BufferBudget;
}

/** One request's answer as the stages before it planned it. */
export interface PlannedAnswer {
  key: AnswerKey;
  reads: AnswerReads;
  /** The version the conditions were decided on; null: the daily rows answer. */
  versioned: AnswerVersion | null;
  /** The coding Accept-Encoding prefers, null for identity. */
  wanted: ContentCoding | null;
  exchange: Exchange;
}

/**
 * How long a request waits for an identical one's read before reading for itself: a read
 * held back by its slow client (no read-ahead room) must not hold back the others.
 */
const COALESCE_WAIT_MS = 2000;

/** The 200 of `planned`: its kept bytes, or its rows read; its body goes out at the client's pace from here. */
export async function sendAnswer(parts: AnswerParts, planned: PlannedAnswer): Promise<Response> {
  const { exchange, versioned } = planned;
  const { cache } = parts;
  let kept = versioned ? cache?.get(planned.key.cached, versioned.version) : undefined;
  let keep: ((answer: CachedAnswer | undefined) => void) | undefined;
  if (versioned && !kept && cache) {
    const turn = cache.join(planned.key.cached, versioned.version);
    if (turn.leader) keep = turn.done;
    // Found again after the wait (not taken from the promise): it may have been dropped since.
    else if (await waitFor(turn.answer, exchange.signal)) kept = cache.get(planned.key.cached, versioned.version, false); // undefined: read it here
  }
  let sent: Awaited<ReturnType<typeof sendOk>>;
  if (kept) {
    const answer = kept;
    exchange.rows = answer.rows;
    exchange.source = "kept";
    sent = await send(parts, planned, { kept: answer, encoded: (coding) => cache!.encoded(answer, coding) }, versioned);
  } else {
    // Opened (read.ts retries a read that fails while it opens), then sent: a failure while
    // its body is read ahead, before the first byte, is read once more, unless the read
    // retried already: one retry a read, never more (a new session each time).
    const rows = await openRows(parts, planned, keep, true);
    try {
      sent = await send(parts, planned, rows.source, rows.at);
    } catch (err) {
      if (!isRetryableRead(err) || exchange.signal.aborted || rows.retried) throw err;
      exchange.retriedAfter = err;
      const again = await openRows(parts, planned, undefined, false); // not kept: the requests waiting for it read for themselves
      sent = await send(parts, planned, again.source, again.at);
    }
  }
  exchange.streaming(sent.outcome);
  return sent.response;
}

/**
 * The 200 with `source` as its body. It says the version its body is at: the kept answer's (the
 * one asked for), or the one read in the rows' own snapshot, which a write committed since the
 * conditions' version moved on; none from the daily rows.
 */
async function send(parts: AnswerParts, { key, wanted, exchange }: PlannedAnswer, source: BodySource, at: AnswerVersion | null) {
  const sent = await sendOk({ ...answerHeaders(key), ...validatorsOf(at) }, source, { wanted, signal: exchange.signal, budget: parts.budget });
  if (at) sent.response.headers.set("etag", key.tags(parts.build, at.version)(sent.coding));
  exchange.coding = sent.coding;
  return sent;
}

/**
 * The rows from the database, opened (their first batch read), and kept as they are sent when
 * `done` is given; `retry`: whether read.ts may read them again if they fail while they open.
 */
async function openRows(parts: AnswerParts, planned: PlannedAnswer, done: ((answer: CachedAnswer | undefined) => void) | undefined, retry: boolean) {
  const { key, exchange } = planned;
  const daily = planned.versioned === null;
  if (daily) exchange.source = "daily"; // said by its line even when the read fails
  let source: ChunkStream;
  let at: AnswerVersion | null;
  let opened: Pick<ChunkStream, "close"> | undefined; // the read, closed here until the body takes it
  let retried: boolean;
  try {
    const asked = performance.now();
    const answered = await planned.reads.read(daily, retry);
    opened = answered.read.read;
    exchange.firstRowsMs = performance.now() - asked;
    retried = answered.read.read.retriedAfter !== undefined;
    exchange.retriedAfter ??= answered.read.read.retriedAfter;
    exchange.source = answered.read.from;
    const rows = rowsSource(answered.read, key.format, exchange);
    source = rows;
    // Read from the daily rows (asked for, or the rollup could not be read after all: a table
    // dropped meanwhile): exact, with no version to say what they are, so not kept.
    at = answered.read.version ?? null;
    if (!at) {
      done?.(undefined);
      done = undefined;
    }
    if (done) {
      const file = parts.cache!.file();
      if (!file) done(undefined); // no file to keep it in: the waiting requests read for themselves
      else {
        const keep = done;
        const { version: keptAt } = at!;
        source = keeping(rows, parts.cache!, file, (chunkSizes) => {
          // Kept under the version of the rows' own snapshot: a request that asked for another
          // (the waiting ones included) does not find it. The waiting requests find the kept
          // entry itself: its compressed forms are shared.
          const entry = chunkSizes && parts.cache!.put(key.cached, { version: keptAt, body: file, chunkSizes, rows: exchange.rows ?? 0 });
          if (entry) exchange.kept = true;
          keep(entry);
        });
      }
    }
  } catch (err) {
    done?.(undefined);
    void opened?.close(err);
    throw err;
  }
  // The body's from here: a failure while it is sent closes the source (and so gives up keeping).
  return { source, at, retried };
}

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
