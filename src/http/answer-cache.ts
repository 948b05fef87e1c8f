// The answer cache (ANSWER_CACHE_MB): whole bodies of 200s of GET /external/v1/product-costs,
// in memory, each valid for one answer version (src/db/answer-version.ts). A request whose
// version still matches is answered from here, its compressed variants made once (br and
// gzip are paid per answer, not per request); a write changes the version, so the old entry
// is never served again and is dropped the next time its key is asked or when room is
// needed. Bounded in bytes, least recently used first; an answer larger than a quarter of
// the bound is not kept (it would push out everything else). Identical requests arriving
// while one is being read wait for it instead of reading the database again.

import { promisify } from "node:util";
import zlib from "node:zlib";
import type { AnswerCacheCounts } from "../metrics/service-metrics.ts";
import { BROTLI_QUALITY, GZIP_LEVEL, type ContentCoding } from "./compression.ts";

const brotli = promisify(zlib.brotliCompress);
const gzip = promisify(zlib.gzip);
// The streamed answers' levels (measured in compression.ts's header), paid here once per answer.
const ENCODERS: Record<ContentCoding, (body: Uint8Array) => Promise<Uint8Array>> = {
  br: (body) => brotli(body, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } }),
  gzip: (body) => gzip(body, { level: GZIP_LEVEL }),
};

export interface CachedAnswer {
  readonly version: string;
  /** The body as the client would get it uncompressed. */
  readonly body: Uint8Array;
  /** Rows in the body, for the log line and metrics. */
  readonly rows: number;
}


interface Entry extends CachedAnswer {
  key: string;
  encoded: Map<ContentCoding, Promise<Uint8Array>>;
  /** Bytes held: the body and every variant made so far. */
  size: number;
}

export interface AnswerCache {
  /** The answer for `key` at `version`, or undefined (a miss; an entry of another version is dropped). */
  get(key: string, version: string): CachedAnswer | undefined;
  /** Keeps an answer just read in full: the kept answer (what encoded() takes), or undefined when it is too large to keep. */
  put(key: string, answer: CachedAnswer): CachedAnswer | undefined;
  /** The body compressed with `coding`, made at the first request for it and kept with the answer. */
  encoded(answer: CachedAnswer, coding: ContentCoding): Promise<Uint8Array>;
  /**
   * Coalesces identical requests: the first for (key, version) gets a `done` to call when its
   * read has ended (with the answer it kept, or undefined); the others get a promise of that.
   */
  join(key: string, version: string): { leader: true; done: (answer: CachedAnswer | undefined) => void } | { leader: false; answer: Promise<CachedAnswer | undefined> };
  /**
   * Room for `bytes` more of answers being read to be kept (all of them together at most a
   * quarter of the bound, beside what is kept): false when there is none, and the answer is
   * then not kept. Given back with release() once the answer is kept or dropped.
   */
  reserve(bytes: number): boolean;
  release(bytes: number): void;
  stats(): AnswerCacheCounts;
}

export function createAnswerCache(maxBytes: number): AnswerCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry>();
  const reads = new Map<string, Promise<CachedAnswer | undefined>>();
  const counts = { hits: 0, misses: 0, evictions: 0, bytes: 0 };
  const maxEntryBytes = Math.floor(maxBytes / 4);
  let collecting = 0; // bytes of answers being read, reserved to be kept
  // Bytes kept or dropped since the last garbage collection; see collectGarbage().
  let churn = 0;
  const collectGarbage = (bytes: number) => {
    // An answer dropped (or replaced) is garbage the engine does not hurry to collect: its
    // heap is small beside these megabytes of buffers. Measured with the mixed load of
    // tests/bench/repeat-reads.ts, collecting after every eighth of the bound churned keeps
    // peak RSS about a fifth lower, for a full collection of a small heap now and then.
    churn += bytes;
    if (churn < maxBytes / 8) return;
    churn = 0;
    Bun.gc(true);
  };

  const drop = (entry: Entry) => {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    counts.bytes -= entry.size;
    collectGarbage(entry.size);
  };
  const makeRoom = (keep?: Entry) => {
    for (const entry of entries.values()) {
      if (counts.bytes <= maxBytes) return;
      if (entry === keep) continue;
      drop(entry);
      counts.evictions++;
    }
  };

  return {
    get(key, version) {
      const entry = entries.get(key);
      if (entry?.version === version) {
        entries.delete(key);
        entries.set(key, entry);
        counts.hits++;
        return entry;
      }
      if (entry) drop(entry); // written since: never served again
      counts.misses++;
      return undefined;
    },
    put(key, answer) {
      if (maxBytes <= 0 || answer.body.byteLength > maxEntryBytes) return undefined;
      const old = entries.get(key);
      if (old) drop(old);
      const entry: Entry = { ...answer, key, encoded: new Map(), size: answer.body.byteLength };
      entries.set(key, entry);
      counts.bytes += entry.size;
      makeRoom(entry);
      return entry;
    },
    encoded(answer, coding) {
      const entry = answer as Entry;
      let variant = entry.encoded.get(coding);
      if (!variant) {
        variant = ENCODERS[coding](entry.body);
        entry.encoded.set(coding, variant);
        void variant.then(
          (bytes) => {
            if (entries.get(entry.key) !== entry) return; // dropped meanwhile: nothing to account
            entry.size += bytes.byteLength;
            counts.bytes += bytes.byteLength;
            makeRoom(entry);
          },
          () => entry.encoded.delete(coding),
        );
      }
      return variant;
    },
    join(key, version) {
      const id = `${version} ${key}`;
      const pending = reads.get(id);
      if (pending) return { leader: false, answer: pending };
      const read = Promise.withResolvers<CachedAnswer | undefined>();
      reads.set(id, read.promise);
      return {
        leader: true,
        done: (answer) => {
          reads.delete(id);
          read.resolve(answer);
        },
      };
    },
    reserve(bytes) {
      if (collecting + bytes > maxEntryBytes) return false;
      collecting += bytes;
      return true;
    },
    release(bytes) {
      collecting -= bytes;
    },
    stats: () => ({ ...counts, entries: entries.size }),
  };
}
