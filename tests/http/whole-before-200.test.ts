// Issue 42: the 200 goes out once its answer is read (body.ts), so that a database fault while
// it is read is the caller's to answer (read again, or 503), never a transfer cut short. Past
// this answer's share of the read-ahead memory (a quarter), the rest streams as before.
import { expect, test } from "bun:test";
import { sendOk } from "../../src/body/body.ts";
import type { ChunkStream } from "../../src/body/chunk-stream.ts";
import { createBufferBudget } from "../../src/body/body.ts";

const CHUNK = new Uint8Array(16 * 1024).fill(0x20);

/** Chunks of 16 KiB, then `failAt`'s read throws (undefined: `count` chunks and the end). */
function source(count: number, failAt?: number) {
  let read = 0;
  let closedWith: unknown = "open";
  const stream: ChunkStream = {
    async next() {
      await Bun.sleep(1);
      if (read === failAt) throw Object.assign(new Error("terminating connection due to administrator command"), { code: "57P01" });
      return read++ < count ? CHUNK : undefined;
    },
    async close(reason) {
      closedWith = reason;
    },
  };
  return { stream, reads: () => read, closedWith: () => closedWith };
}

test("a read that fails before its end, within its share, is thrown by sendOk: no 200, its memory given back", async () => {
  const budget = createBufferBudget(4 * 2 ** 20); // a share of 1 MiB: the 40 chunks (640 KiB) fit
  const rows = source(40, 25);
  const failure = await sendOk({}, rows.stream, { wanted: null, signal: new AbortController().signal, budget }).catch((err) => err);
  expect((failure as { code?: string }).code).toBe("57P01");
  expect(rows.closedWith()).toBe(failure);
  expect(budget.used()).toBe(0);
});

test("an answer within its share is read to its end before the 200", async () => {
  const budget = createBufferBudget(4 * 2 ** 20);
  const rows = source(40);
  const { response, outcome } = await sendOk({}, rows.stream, { wanted: null, signal: new AbortController().signal, budget });
  expect(rows.reads()).toBe(41); // every chunk and the end, before the Response existed
  expect((await response.arrayBuffer()).byteLength).toBe(40 * CHUNK.byteLength);
  expect(await outcome).toEqual({ end: "complete", bytes: 40 * CHUNK.byteLength });
  expect(budget.used()).toBe(0);
});

test("past its share the 200 goes, and a later failure cuts the transfer as before", async () => {
  const budget = createBufferBudget(256 * 1024); // a share of 64 KiB: four chunks
  const rows = source(40, 20);
  const { response, outcome } = await sendOk({}, rows.stream, { wanted: null, signal: new AbortController().signal, budget });
  expect(rows.reads()).toBeLessThan(20);
  const body = response.arrayBuffer().then(
    () => "whole",
    () => "cut",
  );
  expect(await body).toBe("cut");
  expect(await outcome).toMatchObject({ end: "failed" });
});

test("without a read-ahead budget the 200 goes with the first chunk, as before", async () => {
  const rows = source(40);
  const { response } = await sendOk({}, rows.stream, { wanted: null, signal: new AbortController().signal });
  expect(rows.reads()).toBeLessThanOrEqual(2);
  expect((await response.arrayBuffer()).byteLength).toBe(40 * CHUNK.byteLength);
});
