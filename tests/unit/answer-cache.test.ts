// The answer cache (src/http/answer-cache.ts): valid for one version, bounded in bytes with
// the least recently used going first, compressed variants made once, and identical reads
// coalesced.

import { describe, expect, test } from "bun:test";
import { gunzipSync, brotliDecompressSync } from "node:zlib";
import { byteLength, createAnswerCache } from "../../src/http/answer-cache.ts";
import { compressor } from "../../src/http/compression.ts";

const body = (n: number, fill = 120) => [new Uint8Array(n).fill(fill)];

describe("answer cache", () => {
  test("an answer is served for its version only; another version drops it", () => {
    const cache = createAnswerCache(1000);
    expect(cache.put("k", { version: "v1", chunks: body(100), rows: 3 })?.rows).toBe(3);
    expect(cache.get("k", "v1")?.rows).toBe(3);
    expect(cache.get("k", "v2")).toBeUndefined();
    // Written since: gone for good, and its bytes with it.
    expect(cache.get("k", "v1")).toBeUndefined();
    expect(cache.stats()).toEqual({ hits: 1, misses: 2, evictions: 0, bytes: 0, entries: 0 });
  });

  test("bounded in bytes: the least recently used goes first; a quarter of the bound at most per answer", () => {
    const cache = createAnswerCache(1000);
    expect(cache.put("big", { version: "v", chunks: body(251), rows: 1 })).toBeUndefined();
    for (const k of ["a", "b", "c", "d"]) cache.put(k, { version: "v", chunks: body(250), rows: 1 });
    cache.get("a", "v"); // a is now the most recently used
    cache.put("e", { version: "v", chunks: body(250), rows: 1 });
    expect(["a", "b", "c", "d", "e"].map((k) => cache.get(k, "v") !== undefined)).toEqual([true, false, true, true, true]);
    expect(cache.stats()).toMatchObject({ evictions: 1, bytes: 1000, entries: 4 });
  });

  test("nothing is kept with a bound of 0", () => {
    const cache = createAnswerCache(0);
    expect(cache.put("k", { version: "v", chunks: body(1), rows: 1 })).toBeUndefined();
    expect(cache.get("k", "v")).toBeUndefined();
  });

  test("an answer is kept as the chunks it was read in: the same objects, not a copy", () => {
    const cache = createAnswerCache(1000);
    const chunks = [new Uint8Array(10), new Uint8Array(20)];
    cache.put("k", { version: "v", chunks, rows: 2 });
    const kept = cache.get("k", "v")!.chunks;
    expect(kept.length).toBe(2);
    expect(kept[0]).toBe(chunks[0]!);
    expect(kept[1]).toBe(chunks[1]!);
    expect(cache.stats().bytes).toBe(30);
  });

  test("br and gzip are made once per answer, decode to the body, equal a streamed compression, and count in the bound", async () => {
    const cache = createAnswerCache(1_000_000);
    const text = new TextEncoder().encode(JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ i, sku: `SKU-${i}` }))));
    const chunks = [text.subarray(0, 1000), text.subarray(1000, 30_000), text.subarray(30_000)];
    cache.put("k", { version: "v", chunks, rows: 2000 });
    const answer = cache.get("k", "v")!;
    const br = cache.encoded(answer, "br");
    expect(cache.encoded(answer, "br")).toBe(br); // the same promise: compressed once
    expect(Buffer.from(brotliDecompressSync(Buffer.concat(await br))).equals(Buffer.from(text))).toBe(true);
    const gz = await cache.encoded(answer, "gzip");
    expect(Buffer.from(gunzipSync(Buffer.concat(gz))).equals(Buffer.from(text))).toBe(true);
    // The bytes a first read streamed through compression.ts, chunk by chunk: the same ETag names the same bytes.
    for (const [coding, variant] of [["br", await br], ["gzip", gz]] as const) {
      const z = compressor(coding);
      const streamed: Uint8Array[] = [];
      for (const chunk of chunks) streamed.push(...(await z.write(chunk)));
      streamed.push(...(await z.end()));
      expect(Buffer.concat(variant).equals(Buffer.concat(streamed))).toBe(true);
    }
    await Bun.sleep(0);
    expect(cache.stats().bytes).toBe(byteLength(chunks) + byteLength(await br) + byteLength(gz));
  });

  test("identical reads coalesce: one leader, the others get its answer", async () => {
    const cache = createAnswerCache(1000);
    const first = cache.join("k", "v");
    const second = cache.join("k", "v");
    const otherVersion = cache.join("k", "v2");
    expect(first.leader).toBe(true);
    expect(second.leader).toBe(false);
    expect(otherVersion.leader).toBe(true);
    const answer = { version: "v", chunks: body(10), rows: 1 };
    if (first.leader) first.done(answer);
    if (!second.leader) expect(await second.answer).toBe(answer);
    // Done: the next one leads again (a failed read leaves nobody waiting for ever).
    expect(cache.join("k", "v").leader).toBe(true);
  });
});

describe("answers being read", () => {
  test("all of them together hold at most a quarter of the bound; released room is room again", () => {
    const cache = createAnswerCache(1000);
    expect(cache.reserve(200)).toBe(true);
    expect(cache.reserve(50)).toBe(true);
    expect(cache.reserve(1)).toBe(false); // 251 > 250
    cache.release(200);
    expect(cache.reserve(200)).toBe(true);
  });
});
