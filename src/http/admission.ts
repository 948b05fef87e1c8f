// Admission control in front of the database read. A read holds a pool connection for as
// long as its body streams, so at most `maxConcurrent` reads run at once (the pool size),
// at most `maxQueued` wait for a slot, each for at most `queueTimeoutMs`. Past either bound
// the answer is 503 {"detail":"OVERLOADED"} with Retry-After, at once: a burst costs a short
// list of waiters, never an unbounded backlog of requests held in memory.
//
// Each admitted read gets one AbortSignal that fires when the client goes away or the
// whole-request deadline (`requestTimeoutMs` from arrival) passes; the read is then closed
// (a running statement cancelled, the cursor closed, the slot freed) wherever it stands.

import type { RowBatches } from "../db/product-costs.ts";
import { ClientClosedRequestError, OVERLOADED, RequestDeadlineError } from "../failures.ts";
import { contextOf } from "./request-context.ts";

export interface AdmissionOptions {
  /** Reads running at once; the database pool size. */
  maxConcurrent: number;
  /** Requests waiting for a slot; more: 503 OVERLOADED. 0: no waiting at all. */
  maxQueued: number;
  /** Longest wait for a slot; longer: 503 OVERLOADED. */
  queueTimeoutMs: number;
  /** Longest a request may take from arrival to its last byte (0: no limit). */
  requestTimeoutMs: number;
  /** Retry-After of an OVERLOADED answer, in seconds. */
  retryAfterSeconds?: number;
}

export interface Admission {
  /**
   * Runs `open` once a slot is free and returns what it opened, its batches wrapped: the slot
   * is held until they are read to the end or closed. Throws 503 OVERLOADED when no slot comes.
   */
  read<R extends { batches: RowBatches<unknown> }>(request: Request, open: (signal: AbortSignal) => Promise<R>): Promise<R>;
  /** Reads running and requests waiting, for metrics and tests. */
  stats(): { running: number; queued: number };
}

interface Waiter {
  grant(): void;
  fail(err: unknown): void;
}

export const ADMISSION_DEFAULTS = { maxConcurrent: 10, maxQueued: 100, queueTimeoutMs: 10_000, requestTimeoutMs: 120_000 };

export function createAdmission(options: AdmissionOptions): Admission {
  const retryAfter = options.retryAfterSeconds ?? 1;
  let running = 0;
  const waiting: Waiter[] = [];

  const releaseSlot = () => {
    const next = waiting.shift();
    if (next) next.grant(); // the slot passes straight to the next waiter
    else running--;
  };

  const acquire = (signal: AbortSignal): Promise<void> => {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (running < options.maxConcurrent) {
      running++;
      return Promise.resolve();
    }
    if (waiting.length >= options.maxQueued) return Promise.reject(OVERLOADED(retryAfter));
    return new Promise<void>((resolve, reject) => {
      const leave = (err: unknown) => {
        const i = waiting.indexOf(waiter);
        if (i !== -1) waiting.splice(i, 1);
        cleanup();
        reject(err);
      };
      const onAbort = () => leave(signal.reason);
      const timer = setTimeout(() => leave(OVERLOADED(retryAfter)), options.queueTimeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const waiter: Waiter = {
        grant: () => {
          cleanup();
          resolve();
        },
        fail: leave,
      };
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.push(waiter);
    });
  };

  return {
    stats: () => ({ running, queued: waiting.length }),
    async read<R extends { batches: RowBatches<unknown> }>(request: Request, open: (signal: AbortSignal) => Promise<R>): Promise<R> {
      const controller = new AbortController();
      const onClientGone = () => controller.abort(new ClientClosedRequestError());
      const signal = request.signal as AbortSignal | undefined;
      signal?.addEventListener("abort", onClientGone, { once: true });
      let deadline: ReturnType<typeof setTimeout> | undefined;
      if (options.requestTimeoutMs > 0) {
        const left = options.requestTimeoutMs - (performance.now() - contextOf(request).startedAt);
        deadline = setTimeout(() => controller.abort(new RequestDeadlineError(options.requestTimeoutMs)), Math.max(0, left));
      }
      let released = false;
      const release = (holdsSlot: boolean) => {
        if (released) return;
        released = true;
        clearTimeout(deadline);
        signal?.removeEventListener("abort", onClientGone);
        if (holdsSlot) releaseSlot();
      };
      if (signal?.aborted) onClientGone();

      try {
        await acquire(controller.signal);
      } catch (err) {
        release(false);
        throw err;
      }
      let opened: R;
      try {
        opened = await open(controller.signal);
      } catch (err) {
        release(true);
        throw err;
      }
      const batches = opened.batches;

      const finish = () => {
        controller.signal.removeEventListener("abort", onAbort);
        release(true);
      };
      const admitted: typeof batches = {
        first: batches.first,
        finished: () => batches.finished(),
        async *rest() {
          try {
            yield* batches.rest();
          } finally {
            finish();
          }
        },
        async close(reason?: unknown) {
          try {
            await batches.close(reason);
          } finally {
            finish();
          }
        },
      };
      // A deadline or a vanished client closes the read at any point, streaming or not, and
      // frees the slot at once; the stream fails on its next pull (a broken transfer), and a
      // client that never reads again no longer holds anything but its socket.
      const onAbort = () => void admitted.close(controller.signal.reason);
      controller.signal.addEventListener("abort", onAbort, { once: true });
      if (batches.finished()) finish();
      return { ...opened, batches: admitted } as R;
    },
  };
}
