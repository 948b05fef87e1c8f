// The answer cache (ANSWER_CACHE_MB): whole bodies of 200s of GET /external/v1/product-costs,
// each valid for one answer version (src/reads/answer-version.ts). A request whose version still
// matches is answered from here, its compressed variants made once (br and gzip are paid per
// answer, not per request); a write changes the version, so the old entry is never served
// again and is dropped the next time its key is asked or when room is needed. Bounded in
// bytes, least recently used first; an answer larger than a quarter of the bound is not kept
// (it would push out everything else). Identical requests arriving while one is being read
// wait for it instead of reading the database again.
// Each body is kept in an anonymous file in the temporary directory (kept-file.ts), written as
// its first read streams: kept bytes sit in the kernel's page cache, outside the heap, so they
// cost no garbage collection and a dropped answer is freed at once, by a close. Files are
// bounded too (a quarter of the process's descriptors, at most 4,096), since each holds one.

import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { compressor } from "../body/body.ts";
import type { ContentCoding } from "../query/answer-key.ts";
import { KeptFile, type CachedAnswer } from "../body/kept-file.ts";

interface Entry extends CachedAnswer {
  key: string;
  encoded: Map<ContentCoding, Promise<KeptFile>>;
  /** Bytes held: the body and every variant made so far. */
  size: number;
  /** Files held: the body and its variants. */
  files: number;
}

/** What the answer cache has done and holds (/metrics reads it). */
export interface AnswerCacheCounts {
  hits: number;
  misses: number;
  evictions: number;
  bytes: number;
  entries: number;
}

/**
 * `body` compressed by the same compressor, chunk by chunk, as a body streamed from the
 * database (body.ts), into a file of its own: a kept answer's variant has the very bytes its
 * first read sent.
 */
async function compressed({ body, chunkSizes }: CachedAnswer, coding: ContentCoding, directory: string): Promise<KeptFile> {
  const z = compressor(coding);
  const source = body.reader(chunkSizes);
  const out = KeptFile.create(directory);
  try {
    for (let chunk = await source.next(); chunk; chunk = await source.next()) for (const part of await z.write(chunk)) out.append(part);
    for (const part of await z.end()) out.append(part);
    await out.written();
    return out;
  } catch (err) {
    z.destroy();
    await source.close(err);
    out.drop();
    throw err;
  }
}

/** The open files this process may hold (its soft RLIMIT_NOFILE; 1,024 when it cannot be read). */
function openFileLimit(): number {
  try {
    const line = readFileSync("/proc/self/limits", "utf8").match(/^Max open files\s+(\d+)/m);
    return line ? Number(line[1]) : 1024;
  } catch {
    return 1024;
  }
}

export interface AnswerCache {
  /**
   * The answer for `key` at `version`, or undefined (a miss; an entry of another version is
   * dropped). Its body is to be held (KeptFile.hold) before the next await: a dropped answer's
   * files are closed as soon as nobody holds or reads them. `count`: false for a second look
   * by the same request (after waiting for another's read), already counted.
   */
  get(key: string, version: string, count?: boolean): CachedAnswer | undefined;
  /** A new empty file to write an answer into, or undefined when none can be made now. */
  file(): KeptFile | undefined;
  /**
   * Keeps an answer written in full: the kept answer (what encoded() takes), or undefined when
   * it is too large to keep (its file is then dropped).
   */
  put(key: string, answer: CachedAnswer): CachedAnswer | undefined;
  /** The body compressed with `coding`, made at the first request for it and kept with the answer. */
  encoded(answer: CachedAnswer, coding: ContentCoding): Promise<KeptFile>;
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

/** `directory`: where the files are made (default: TMPDIR, else /tmp); `maxFiles`: default from the descriptor limit. */
export function createAnswerCache(maxBytes: number, directory = tmpdir(), maxFiles = Math.min(4096, Math.floor(openFileLimit() / 4))): AnswerCache {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, Entry>();
  const reads = new Map<string, Promise<CachedAnswer | undefined>>();
  const counts = { hits: 0, misses: 0, evictions: 0, bytes: 0 };
  const maxEntryBytes = Math.floor(maxBytes / 4);
  let files = 0; // held by the entries
  let collecting = 0; // bytes of answers being read, reserved to be kept

  const drop = (entry: Entry) => {
    if (entries.get(entry.key) !== entry) return;
    entries.delete(entry.key);
    counts.bytes -= entry.size;
    files -= entry.files;
    entry.body.drop();
    for (const variant of entry.encoded.values()) variant.then(dropWithBody(entry), () => {});
  };
  // A request holds the body from finding the answer to its last byte (body.ts), and the
  // variant it sends lives as long: a variant goes only once the body is closed.
  const dropWithBody = (entry: Entry) => (variant: KeptFile) => entry.body.afterClose(() => variant.drop());
  const makeRoom = (keep?: Entry) => {
    for (const entry of entries.values()) {
      if (counts.bytes <= maxBytes && files <= maxFiles) return;
      if (entry === keep) continue;
      drop(entry);
      counts.evictions++;
    }
  };

  return {
    get(key, version, count = true) {
      const entry = entries.get(key);
      if (entry?.version === version) {
        entries.delete(key);
        entries.set(key, entry);
        if (count) counts.hits++;
        return entry;
      }
      if (entry) drop(entry); // written since: never served again
      if (count) counts.misses++;
      return undefined;
    },
    file() {
      try {
        return maxBytes > 0 ? KeptFile.create(directory) : undefined;
      } catch {
        return undefined; // no room for a file now (descriptors, the directory): this answer is not kept
      }
    },
    put(key, answer) {
      const size = answer.body.size;
      if (maxBytes <= 0 || size > maxEntryBytes) {
        answer.body.drop();
        return undefined;
      }
      const old = entries.get(key);
      if (old) drop(old);
      const entry: Entry = { ...answer, key, encoded: new Map(), size, files: 1 };
      entries.set(key, entry);
      counts.bytes += entry.size;
      files += 1;
      makeRoom(entry);
      return entry;
    },
    encoded(answer, coding) {
      const entry = answer as Entry;
      let variant = entry.encoded.get(coding);
      if (!variant) {
        variant = compressed(entry, coding, directory);
        entry.encoded.set(coding, variant);
        void variant.then(
          (file) => {
            if (entries.get(entry.key) !== entry) return dropWithBody(entry)(file); // dropped meanwhile: nothing to account
            entry.size += file.size;
            entry.files += 1;
            counts.bytes += file.size;
            files += 1;
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
