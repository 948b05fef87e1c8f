// The answer cache (src/answer/answer-cache.ts) and its files (kept-file.ts): valid for one
// version, bounded in bytes and in files with the least recently used going first, compressed
// variants made once, identical reads coalesced, and every byte kept outside the heap in a
// file nobody else can open, closed as soon as it is dropped and no longer read.

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { createAnswerCache, type AnswerCache } from "../../src/answer/answer-cache.ts";
import type { CachedAnswer } from "../../src/body/kept-file.ts";
import { compressor } from "../../src/body/body.ts";
import { KeptFile } from "../../src/body/kept-file.ts";

const directory = mkdtempSync(join(tmpdir(), "answer-cache-test-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** An answer of `chunks` written into a file of `cache`, as a first read writes it. */
async function written(cache: AnswerCache, chunks: Uint8Array[], rows = 1, version = "v"): Promise<CachedAnswer> {
  const body = cache.file()!;
  for (const chunk of chunks) body.append(chunk);
  await body.written();
  return { version, body, chunkSizes: chunks.map((c) => c.byteLength), rows };
}
const body = (n: number, fill = 120) => [new Uint8Array(n).fill(fill)];

async function contents(file: KeptFile): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  const reader = file.reader();
  for (let chunk = await reader.next(); chunk; chunk = await reader.next()) parts.push(chunk);
  return Buffer.concat(parts);
}

/** This process's open descriptors on files of `directory` (deleted ones show as "(deleted)"). */
const openInDirectory = () =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(directory);
    } catch {
      return false;
    }
  }).length;

describe("answer cache", () => {
  test("an answer is served for its version only; another version drops it", async () => {
    const cache = createAnswerCache(1000, directory);
    expect(cache.put("k", await written(cache, body(100), 3, "v1"))?.rows).toBe(3);
    expect(cache.get("k", "v1")?.rows).toBe(3);
    expect(cache.get("k", "v2")).toBeUndefined();
    // Written since: gone for good, and its bytes with it.
    expect(cache.get("k", "v1")).toBeUndefined();
    expect(cache.stats()).toEqual({ hits: 1, misses: 2, evictions: 0, bytes: 0, entries: 0 });
  });

  test("bounded in bytes: the least recently used goes first; a quarter of the bound at most per answer", async () => {
    const cache = createAnswerCache(1000, directory);
    expect(cache.put("big", await written(cache, body(251)))).toBeUndefined();
    for (const k of ["a", "b", "c", "d"]) cache.put(k, await written(cache, body(250)));
    cache.get("a", "v"); // a is now the most recently used
    cache.put("e", await written(cache, body(250)));
    expect(["a", "b", "c", "d", "e"].map((k) => cache.get(k, "v") !== undefined)).toEqual([true, false, true, true, true]);
    expect(cache.stats()).toMatchObject({ evictions: 1, bytes: 1000, entries: 4 });
  });

  test("bounded in files: one descriptor each, the least recently used goes first", async () => {
    const cache = createAnswerCache(1_000_000, directory, 3);
    for (const k of ["a", "b", "c", "d"]) cache.put(k, await written(cache, body(10)));
    expect(["a", "b", "c", "d"].map((k) => cache.get(k, "v") !== undefined)).toEqual([false, true, true, true]);
    expect(cache.stats()).toMatchObject({ evictions: 1, entries: 3 });
  });

  test("nothing is kept with a bound of 0", async () => {
    const cache = createAnswerCache(0, directory);
    expect(cache.file()).toBeUndefined();
    const elsewhere = createAnswerCache(1000, directory);
    expect(cache.put("k", await written(elsewhere, body(1)))).toBeUndefined();
    expect(cache.get("k", "v")).toBeUndefined();
  });

  test("an answer is kept in a file without a name: read back whole; a dropped one is closed once its last reader is done", async () => {
    const cache = createAnswerCache(1000, directory);
    const before = openInDirectory();
    const answer = cache.put("k", await written(cache, [new Uint8Array(10).fill(1), new Uint8Array(20).fill(2)], 2))!;
    expect(readdirSync(directory)).toEqual([]); // unlinked at once: a crash leaves nothing behind
    expect(openInDirectory()).toBe(before + 1);
    expect(cache.stats().bytes).toBe(30);
    expect([...(await contents(answer.body))]).toEqual([...Array(10).fill(1), ...Array(20).fill(2)]);

    const reading = answer.body.reader();
    expect((await reading.next())?.byteLength).toBe(30);
    expect(cache.get("k", "other")).toBeUndefined(); // dropped, while a client still reads it
    expect(openInDirectory()).toBe(before + 1);
    expect(await reading.next()).toBeUndefined(); // that client's last byte: closed now
    expect(openInDirectory()).toBe(before);
  });

  test("a held answer dropped by a write keeps its body and its variants open until let go", async () => {
    const cache = createAnswerCache(1_000_000, directory);
    const before = openInDirectory();
    const text = new TextEncoder().encode("x".repeat(5000));
    const answer = cache.put("k", await written(cache, [text]))!;
    await cache.encoded(answer, "gzip");
    const release = answer.body.hold(); // a request found it, and is about to send its gzip form
    expect(cache.get("k", "newer")).toBeUndefined(); // a write: dropped
    const variant = await cache.encoded(answer, "gzip"); // what that request sends
    expect(gunzipSync(await contents(variant)).equals(Buffer.from(text))).toBe(true);
    expect(openInDirectory()).toBe(before + 2);
    release();
    expect(openInDirectory()).toBe(before);
  });

  test("br and gzip are made once per answer, decode to the body, equal a streamed compression, and count in the bound", async () => {
    const cache = createAnswerCache(1_000_000, directory);
    const text = new TextEncoder().encode(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ i, sku: `SKU-${i}` }))));
    const chunks = [text.subarray(0, 1000), text.subarray(1000, 30_000), text.subarray(30_000)];
    const answer = cache.put("k", await written(cache, chunks, 2000))!;
    const br = cache.encoded(answer, "br");
    expect(cache.encoded(answer, "br")).toBe(br); // the same promise: compressed once
    expect(brotliDecompressSync(await contents(await br)).equals(Buffer.from(text))).toBe(true);
    const gz = await contents(await cache.encoded(answer, "gzip"));
    expect(gunzipSync(gz).equals(Buffer.from(text))).toBe(true);
    // The bytes a first read streamed through compression.ts, chunk by chunk: the same ETag names the same bytes.
    for (const [coding, variant] of [["br", await contents(await br)], ["gzip", gz]] as const) {
      const z = compressor(coding);
      const streamed: Uint8Array[] = [];
      for (const chunk of chunks) streamed.push(...(await z.write(chunk)));
      streamed.push(...(await z.end()));
      expect(variant.equals(Buffer.concat(streamed))).toBe(true);
    }
    await Bun.sleep(0);
    expect(cache.stats().bytes).toBe(text.byteLength + (await br).size + gz.byteLength);
  });

  test("identical reads coalesce: one leader, the others get its answer", async () => {
    const cache = createAnswerCache(1000, directory);
    const first = cache.join("k", "v");
    const second = cache.join("k", "v");
    const otherVersion = cache.join("k", "v2");
    expect(first.leader).toBe(true);
    expect(second.leader).toBe(false);
    expect(otherVersion.leader).toBe(true);
    const answer = await written(cache, body(10));
    if (first.leader) first.done(answer);
    if (!second.leader) expect(await second.answer).toBe(answer);
    // Done: the next one leads again (a failed read leaves nobody waiting for ever).
    expect(cache.join("k", "v").leader).toBe(true);
  });

  test("a directory where no file can be made: nothing kept, nothing thrown", () => {
    const cache = createAnswerCache(1000, join(directory, "missing"));
    expect(cache.file()).toBeUndefined();
    expect(() => KeptFile.create(join(directory, "missing"))).toThrow("ENOENT");
  });
});

describe("answers being read", () => {
  test("all of them together hold at most a quarter of the bound; released room is room again", () => {
    const cache = createAnswerCache(1000, directory);
    expect(cache.reserve(200)).toBe(true);
    expect(cache.reserve(50)).toBe(true);
    expect(cache.reserve(1)).toBe(false); // 251 > 250
    cache.release(200);
    expect(cache.reserve(200)).toBe(true);
  });
});
