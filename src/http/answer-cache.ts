// The answer cache (ANSWER_CACHE_MB): whole bodies of 200s of GET /external/v1/product-costs,
// in memory, each valid for one answer version (src/db/answer-version.ts). A request whose
// version still matches is answered from here, its compressed variants made once (br and
// gzip are paid per answer, not per request); a write changes the version, so the old entry
// is never served again and is dropped the next time its key is asked or when room is
// needed. Bounded in bytes, least recently used first; an answer larger than a quarter of
// the bound is not kept (it would push out everything else). Identical requests arriving
// while one is being read wait for it instead of reading the database again.
// An answer is kept as the chunks it was read in, never copied into one buffer: the sockets
// being served send those very chunks, and a dropped answer is freed with the last of them.

import { compressor, type ContentCoding } from "./compression.ts";
import type { AnswerCacheCounts } from "../metrics/service-metrics.ts";

/** A body held as the chunks it was read or compressed in (in order; never changed). */
export type Chunks = readonly Uint8Array[];

export interface CachedAnswer {
  readonly version: string;
  /** The body as the client would get it uncompressed. */
  readonly chunks: Chunks;
  /** Rows in the body, for the log line and metrics. */
  readonly rows: number;
}

interface Entry extends CachedAnswer {
  key: string;
  encoded: Map<ContentCoding, Promise<Chunks>>;
  /** Bytes held: the body and every variant made so far. */
  size: number;
}

export const byteLength = (chunks: Chunks) => chunks.reduce((n, c) => n + c.byteLength, 0);

/**
 * `chunks` compressed by the same compressor, chunk by chunk, as a body streamed from the
 * database (body.ts): a kept answer's variant has the very bytes its first read sent.
 */
async function compressed(chunks: Chunks, coding: ContentCoding): Promise<Chunks> {
  const z = compressor(coding);
  const out: Uint8Array[] = [];
  try {
    for (const chunk of chunks) out.push(...(await z.write(chunk)));
    out.push(...(await z.end()));
    return out;
  } catch (err) {
    z.destroy();
    throw err;
  }
}

export interface AnswerCache {
  /** The answer for `key` at `version`, or undefined (a miss; an entry of another version is dropped). */
  get(key: string, version: string): CachedAnswer | undefined;
  /** Keeps an answer just read in full: the kept answer (what encoded() takes), or undefined when it is too large to keep. */
  put(key: string, answer: CachedAnswer): CachedAnswer | undefined;
  /** The body compressed with `coding`, made at the first request for it and kept with the answer. */
  encoded(answer: CachedAnswer, coding: ContentCoding): Promise<Chunks>;
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
  // Bytes dropped since the last full collection; see drop().
  let dropped = 0;

  const drop = (entry: Entry) => {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    counts.bytes -= entry.size;
    // A dropped answer's chunks have lived long (the engine's old generation, collected
    // rarely) and its heap is small beside its megabytes: once an eighth of the bound is
    // dropped, a full collection. tests/bench/answer-memory.ts, the mixed load at the
    // defaults: peak RSS 642-734 MB with it, 700-850 MB when the collector is only asked to
    // run on its own thread (Bun.gc(false)), 967-1009 MB with neither.
    dropped += entry.size;
    if (dropped >= maxBytes / 8) {
      dropped = 0;
      Bun.gc(true);
    }
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
      const size = byteLength(answer.chunks);
      if (maxBytes <= 0 || size > maxEntryBytes) return undefined;
      const old = entries.get(key);
      if (old) drop(old);
      const entry: Entry = { ...answer, key, encoded: new Map(), size };
      entries.set(key, entry);
      counts.bytes += entry.size;
      makeRoom(entry);
      return entry;
    },
    encoded(answer, coding) {
      const entry = answer as Entry;
      let variant = entry.encoded.get(coding);
      if (!variant) {
        variant = compressed(entry.chunks, coding);
        entry.encoded.set(coding, variant);
        void variant.then(
          (chunks) => {
            if (entries.get(entry.key) !== entry) return; // dropped meanwhile: nothing to account
            const bytes = byteLength(chunks);
            entry.size += bytes;
            counts.bytes += bytes;
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
