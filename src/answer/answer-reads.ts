// The reads of one request's answer (issue 44's two sources): its version and its rows, under
// the same deadlines, admission slots and database guard; from the rollup, or from the daily
// rows where the source says so (src/reads/read-source.ts). A read of the rollup that fails for
// the schema is read again from the daily rows and turns the source, so that no request gets a
// 503 while an exact answer can be read. The answer (product-costs-answer.ts) decides what to
// read from what they return.

import { readAnswerVersion, readProductCosts, type AnswerVersion, type ProductCostRead } from "../reads/product-costs.ts";
import type { Sql } from "../database/client.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import type { EdgeStore } from "../reads/edges/edge-store.ts";
import type { EdgeWarmer } from "../reads/edges/range-read.ts";
import { RollupUnreadableError, rollupGuard, type SourceChoice } from "../reads/read-source.ts";
import type { ReadOptions, Slots } from "../reads/read.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import { OVERLOADED } from "../failures.ts";

/** The reads of one request's answer. */
export interface AnswerReads {
  /** The answer's version, read before any row; null where the rows come from the daily rows (no version). */
  version(): Promise<AnswerVersion | null>;
  /** The rows: from the rollup, unless `daily` or the rollup cannot be read now; which one answered. `retry` false: not read again if they fail while they open (read.ts). */
  read(daily: boolean, retry?: boolean): Promise<{ daily: boolean; read: ProductCostRead }>;
}

/** The deadlines every read of a request keeps, version and rows alike (read.ts). */
export type ReadLimits = Pick<ReadOptions, "firstBatchTimeoutMs" | "connectTimeoutMs" | "silence">;

export interface AnswerReadsDeps {
  sql: Sql;
  admission: Admission;
  guard?: DatabaseGuard;
  /** None: the rollup, always. */
  source?: SourceChoice;
  limits: ReadLimits;
  /** How the rows are read: rows per batch (default 2,000), what reads of ranges keep for the next (EDGE_CACHE_MB), and what reads the rest in the background (edge-warmer.ts). */
  rows: { batchSize?: number; edges?: EdgeStore; warmer?: EdgeWarmer };
}

/**
 * The reads of each request's answer, made once for every request; `requestId` names the rows'
 * session while they are read (pg_stat_activity's application_name: the pool's name, then the id).
 */
export function answerReads(deps: AnswerReadsDeps): (key: AnswerKey, signal: AbortSignal, requestId?: string) => AnswerReads {
  const { sql, admission, source } = deps;
  const poolName = sql.options.connection?.application_name;
  // A failure of a read of the rollup for the schema is no problem of the database: the guard
  // does not count it (read-source.ts), the daily rows answer instead.
  const rollup = deps.guard && source ? rollupGuard(deps.guard) : deps.guard;
  const deadlines = (signal: AbortSignal): ReadOptions => ({ ...deps.limits, signal });
  // A range's version, one read shared by the requests that arrived while the one before ran.
  // Each request still waits for it in an admission slot of its own (below), so the bounds on
  // running and queued requests (and 503 OVERLOADED past them) stay what they were.
  const sharedVersion = freshReads(
    (range: AnswerKey["range"], signal) => {
      const read = () => readAnswerVersion(sql, range.firstDay, range.lastDay, deadlines(signal));
      return rollup ? rollup.run(read) : read();
    },
    (range) => range.id,
  );
  // A read of the rollup that met its schema gone: the daily rows from now on (until a check finds it again).
  const turned = (err: unknown): boolean => {
    if (!source || !(err instanceof RollupUnreadableError)) return false;
    source.rollupFailed(err);
    return true;
  };

  return (key, signal, requestId) => {
    const sessionName = requestId === undefined || !poolName ? undefined : `${poolName} ${requestId}`;
    // A slot first (admission), then the guard, then the read: src/reads/read.ts owns all three.
    const rows = (daily: boolean, retry = true) =>
      readProductCosts(sql, key.query, {
        ...deadlines(signal),
        retry,
        sessionName,
        slots: admission,
        guard: daily ? deps.guard : rollup,
        batchSize: deps.rows.batchSize ?? 2000,
        rendered: key.format === "json",
        daily,
        edges: deps.rows.edges,
        warmer: deps.rows.warmer,
      });
    return {
      async version() {
        if (source && (await source.current(deps.limits.firstBatchTimeoutMs)).name === "daily") return null;
        try {
          return await admission.run(signal, () => sharedVersion(key.range, signal));
        } catch (err) {
          if (turned(err)) return null;
          throw err;
        }
      },
      async read(daily, retry) {
        if (!daily) {
          try {
            return { daily: false, read: await rows(false, retry) };
          } catch (err) {
            if (!turned(err)) throw err;
          }
        }
        return { daily: true, read: await rows(true, retry) };
      },
    };
  };
}

// Identical reads shared between callers without ever answering from before a caller
// arrived. A caller joins the next read of its key that has not started yet, starting one
// when none is running; never one already running, whose snapshot may predate the caller.
// So a write committed before a caller arrived is in its answer, exactly as if it had read
// alone, and under load one read serves every caller that arrived during the one before:
// N callers of one key cost about one read per round trip instead of N.

/** Reads `key`; `signal` aborts once every caller waiting for it has left. */
export type KeyedRead<T, K = string> = (key: K, signal: AbortSignal) => Promise<T>;

/** One shared read: its answer, who waits for it, and the signal that fires once all have left. */
interface SharedRead<T> {
  answer: Promise<T>;
  settle: { resolve: (value: T) => void; reject: (reason: unknown) => void };
  waiting: number;
  left: AbortController;
}

function newRead<T>(): SharedRead<T> {
  const { promise, resolve, reject } = Promise.withResolvers<T>();
  promise.catch(() => {}); // every caller may have left: a failure nobody waits for is no crash
  return { answer: promise, settle: { resolve, reject }, waiting: 0, left: new AbortController() };
}

/** `read`, shared by the callers of one key; keys are the same when `idOf` says so (default: they are strings). */
export function freshReads<T, K = string>(read: KeyedRead<T, K>, idOf: (key: K) => string = String): KeyedRead<T, K> {
  const keys = new Map<string, { running?: SharedRead<T>; next?: SharedRead<T> }>();

  const start = (id: string, key: K) => {
    const state = keys.get(id)!;
    const next = state.next;
    state.next = undefined;
    if (!next || next.waiting === 0) return void keys.delete(id); // nobody waits for it any more
    state.running = next;
    read(key, next.left.signal)
      .then(next.settle.resolve, next.settle.reject)
      .finally(() => {
        state.running = undefined;
        start(id, key);
      });
  };

  return async (key, signal) => {
    signal.throwIfAborted();
    const id = idOf(key);
    let state = keys.get(id);
    if (!state) keys.set(id, (state = {}));
    const joined = (state.next ??= newRead<T>());
    joined.waiting++;
    if (!state.running) start(id, key);
    const { promise: gone, reject } = Promise.withResolvers<never>();
    const leave = () => {
      reject(signal.reason);
      // The last caller of a running read gone: stop it (a queued one is dropped at its start).
      if (--joined.waiting === 0 && keys.get(id)?.running === joined) joined.left.abort(signal.reason);
    };
    signal.addEventListener("abort", leave, { once: true });
    try {
      return await Promise.race([joined.answer, gone]);
    } finally {
      signal.removeEventListener("abort", leave);
    }
  };
}

// Admission control in front of the database read. A read holds a pool connection for as
// long as its body streams, so at most `maxConcurrent` reads run at once (the pool size),
// at most `maxQueued` wait for a slot, each for at most `queueTimeoutMs`. Past either bound
// the answer is 503 {"detail":"OVERLOADED"} with Retry-After, at once: a burst costs a short
// list of waiters, never an unbounded backlog of requests held in memory.
//
// A row read (src/reads/read.ts) holds its slot until it ends or is closed, and gives it back
// itself; a short read (the answer's version) holds one while it runs.

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
  /** Whether any read runs or waits now, and how many slots were granted so far (the edge warmer reads only while none does). */
  activity(): { busy: boolean; begun: number };
}

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
    activity: () => ({ busy: running > 0 || waiting.length > 0, begun: granted }),
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
