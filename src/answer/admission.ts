// Admission control in front of the database read. A read holds a pool connection for as
// long as its body streams, so at most `maxConcurrent` reads run at once (the pool size),
// at most `maxQueued` wait for a slot, each for at most `queueTimeoutMs`. Past either bound
// the answer is 503 {"detail":"OVERLOADED"} with Retry-After, at once: a burst costs a short
// list of waiters, never an unbounded backlog of requests held in memory.
//
// A row read (src/reads/read.ts) holds its slot until it ends or is closed, and gives it back
// itself; a short read (the answer's version) holds one while it runs.

import { DEFAULTS } from "../settings/config.ts";
import type { Slots } from "../reads/read.ts";
import { OVERLOADED } from "../failures.ts";

export interface AdmissionOptions {
  /** Reads running at once; the database pool size. */
  maxConcurrent: number;
  /** Requests waiting for a slot; more: 503 OVERLOADED. 0: no waiting at all. */
  maxQueued: number;
  /** Longest wait for a slot; longer: 503 OVERLOADED. */
  queueTimeoutMs: number;
}

export interface Admission extends Slots {
  /** Runs a short read (`work`, a promise) in a slot, freed when it settles. Throws 503 OVERLOADED when no slot comes. */
  run<T>(signal: AbortSignal, work: () => Promise<T>): Promise<T>;
  /** Reads running and requests waiting, and slots given so far: for metrics, the edge warmer and tests. */
  stats(): { running: number; queued: number; granted: number };
}

// For an app given none: the settings' defaults (DB_POOL_MAX, REQUEST_QUEUE_MAX, ...).
export const ADMISSION_DEFAULTS = { maxConcurrent: DEFAULTS.dbPoolMax, maxQueued: DEFAULTS.requestQueueMax, queueTimeoutMs: DEFAULTS.requestQueueTimeoutMs };

// Retry-After of an OVERLOADED answer, in seconds.
const RETRY_AFTER_SECONDS = 1;

export function createAdmission(options: AdmissionOptions): Admission {
  let running = 0;
  let granted = 0;
  const waiting: (() => void)[] = []; // each waiter's grant

  const releaseSlot = () => {
    const next = waiting.shift();
    if (next) {
      granted++;
      next(); // the slot passes straight to the next waiter
    }
    else running--;
  };

  const acquire = (signal: AbortSignal): Promise<void> => {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (running < options.maxConcurrent) {
      running++;
      granted++;
      return Promise.resolve();
    }
    if (waiting.length >= options.maxQueued) return Promise.reject(OVERLOADED(RETRY_AFTER_SECONDS));
    return new Promise<void>((resolve, reject) => {
      const stopWaiting = () => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
      };
      const grant = () => (stopWaiting(), resolve());
      const leave = (err: unknown) => {
        stopWaiting();
        waiting.splice(waiting.indexOf(grant), 1); // still listed: a granted waiter has no timer or listener left
        reject(err);
      };
      const onAbort = () => leave(signal.reason);
      const timer = setTimeout(() => leave(OVERLOADED(RETRY_AFTER_SECONDS)), options.queueTimeoutMs);
      signal.addEventListener("abort", onAbort, { once: true });
      waiting.push(grant);
    });
  };

  return {
    stats: () => ({ running, queued: waiting.length, granted }),
    async run(signal, work) {
      await acquire(signal);
      try {
        return await work();
      } finally {
        releaseSlot();
      }
    },
    async acquire(signal) {
      await acquire(signal);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        releaseSlot();
      };
    },
  };
}
