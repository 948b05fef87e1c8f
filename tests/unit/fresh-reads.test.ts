// Shared reads that never answer from before a caller arrived (src/answer/fresh-reads.ts): a caller
// joins the next read of its key, never one already running; callers that arrive during one
// read share the next; a caller that leaves gets its signal's reason, and the last one to
// leave stops the read.

import { expect, test } from "bun:test";
import { freshReads } from "../../src/answer/answer-reads.ts";

/** A read per call, each finished by hand: `started` lists the reads begun, in order. */
function manualReads() {
  const started: { key: string; signal: AbortSignal; finish: (value: string) => void; fail: (err: unknown) => void }[] = [];
  const read = (key: string, signal: AbortSignal) =>
    new Promise<string>((resolve, reject) => started.push({ key, signal, finish: resolve, fail: reject }));
  return { started, read };
}
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
const live = () => new AbortController().signal;

test("a caller arriving while a read runs gets the next read's answer, never the running one's", async () => {
  const { started, read } = manualReads();
  const shared = freshReads(read);
  const early = shared("jan", live());
  await tick();
  const late = shared("jan", live()); // arrives while the first read runs: it may have missed a write
  await tick();
  expect(started.length).toBe(1);
  started[0]!.finish("before the write");
  expect(await early).toBe("before the write");
  await tick();
  expect(started.length).toBe(2); // started only now, after `late` arrived
  started[1]!.finish("after the write");
  expect(await late).toBe("after the write");
});

test("callers arriving during one read share the next: a read per round trip, not per caller; keys apart", async () => {
  const { started, read } = manualReads();
  const shared = freshReads(read);
  const first = shared("jan", live());
  const waiting = Array.from({ length: 10 }, () => shared("jan", live()));
  const other = shared("feb", live());
  await tick();
  expect(started.map((r) => r.key)).toEqual(["jan", "feb"]);
  started[0]!.finish("a");
  started[1]!.finish("f");
  expect([await first, await other]).toEqual(["a", "f"]);
  await tick();
  expect(started.map((r) => r.key)).toEqual(["jan", "feb", "jan"]);
  started[2]!.finish("b");
  expect(await Promise.all(waiting)).toEqual(Array(10).fill("b"));
  // Nothing running, nothing waiting: the next caller starts a read at once.
  const again = shared("jan", live());
  await tick();
  expect(started.length).toBe(4);
  started[3]!.finish("c");
  expect(await again).toBe("c");
});

test("a failure reaches every caller of that read, and the next read is tried afresh", async () => {
  const { started, read } = manualReads();
  const shared = freshReads(read);
  const lead = shared("jan", live());
  const callers = [shared("jan", live()), shared("jan", live())]; // both wait for the next read
  await tick();
  started[0]!.finish("lead");
  expect(await lead).toBe("lead");
  await tick();
  started[1]!.fail(new Error("database down"));
  const outcomes = await Promise.allSettled(callers);
  expect(outcomes.map((o) => (o.status === "rejected" ? (o.reason as Error).message : o.status))).toEqual(["database down", "database down"]);
  const next = shared("jan", live());
  await tick();
  started[2]!.finish("up");
  expect(await next).toBe("up");
});

test("a caller that leaves gets its signal's reason; the read goes on for the others and stops when the last leaves", async () => {
  const { started, read } = manualReads();
  const shared = freshReads(read);
  const a = new AbortController();
  const b = new AbortController();
  const first = shared("jan", a.signal);
  const second = (async () => {
    await tick();
    return shared("jan", b.signal);
  })();
  void second.catch(() => {});
  await tick();
  // Alone on the running read: leaving stops it.
  a.abort(new Error("client gone"));
  await expect(first).rejects.toThrow("client gone");
  expect(started[0]!.signal.aborted).toBe(true);
  started[0]!.fail(started[0]!.signal.reason); // nobody listens: no unhandled rejection
  await tick();
  expect(started.length).toBe(2);
  const third = shared("jan", live()); // the second caller's read runs: this one waits for the next
  await tick();
  b.abort(new Error("deadline"));
  await expect(second).rejects.toThrow("deadline");
  expect(started[1]!.signal.aborted).toBe(true); // its only caller left
  started[1]!.finish("unused");
  await tick();
  expect(started.length).toBe(3);
  started[2]!.finish("third");
  expect(await third).toBe("third");
});

test("a caller already gone never starts a read; a queued read whose callers all left is not started", async () => {
  const { started, read } = manualReads();
  const shared = freshReads(read);
  const gone = new AbortController();
  gone.abort(new Error("gone"));
  await expect(shared("jan", gone.signal)).rejects.toThrow("gone");
  expect(started.length).toBe(0);
  const running = shared("jan", live());
  const leaves = new AbortController();
  const queued = shared("jan", leaves.signal);
  leaves.abort(new Error("left"));
  await expect(queued).rejects.toThrow("left");
  await tick();
  started[0]!.finish("x");
  expect(await running).toBe("x");
  await tick();
  expect(started.length).toBe(1);
});
