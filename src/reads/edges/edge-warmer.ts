// Reads in the background what a range's read lacked, so that the next range sharing its edges
// is read from memory (range-read.ts). A read with two parts or more to read (the catalogue, an
// edge) reads its range with the one statement instead, the cheaper for it, and offers the
// range here; the parts are then read once the service has no read running or waiting, one
// range at a time, in a slot of its own (admission: never more connections than the pool's),
// and kept in the edge store under the keys of the snapshot they were read in. The request that
// offered them never waits for this.
//
// Bounded: at most MAX_WAITING ranges wait (the newest offered replaces the oldest); an offer of
// a range already waiting changes nothing. A failure is logged at debug and forgotten: the
// parts are read again by whatever read next lacks them.

import lockRollupRead from "../../../sql/queries/lock_rollup_read.sql" with { type: "text" };
import type { Sql } from "../../database/client.ts";
import type { EdgeStore } from "./edge-store.ts";
import { keepPartsIn } from "./range-read.ts";
import type { ProductCostQuery } from "../../query/product-cost-params.ts";

/** Ranges waiting to be read into the store, at most. */
const MAX_WAITING = 8;

/** How long the service must have been quiet before a range's parts are read. */
export const QUIET_MS = 250;

/** How often a warmer with ranges waiting looks whether the service is quiet. */
const POLL_MS = 25;

export interface EdgeWarmerOptions {
  sql: Sql;
  store: EdgeStore;
  /** Whether a read is running or waiting now, and how many reads have begun so far (admission's counts). */
  activity: () => { busy: boolean; begun: number };
  /** Runs `work` in an admission slot. */
  inSlot: <T>(work: () => Promise<T>) => Promise<T>;
  debug?: (msg: string, fields: Record<string, unknown>) => void;
}

export interface EdgeWarmer {
  /** Reads what a read of `q` as edges lacks, later, once the service is quiet. */
  offer(q: ProductCostQuery): void;
  /** Ranges waiting, and whether one is being read now: for tests. */
  pending(): number;
  /** Settles once nothing waits and nothing is being read: for tests. */
  settled(): Promise<void>;
}

export function createEdgeWarmer(options: EdgeWarmerOptions): EdgeWarmer {
  const waiting = new Map<string, ProductCostQuery>(); // by range, oldest first
  let running = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let onSettled: (() => void)[] = [];
  let lastBegun = -1;
  let quietSince = 0;

  /** Whether nothing has run, waited or begun for QUIET_MS, as seen from poll to poll. */
  const quiet = () => {
    const { busy, begun } = options.activity();
    const now = performance.now();
    if (busy || begun !== lastBegun) {
      lastBegun = begun;
      quietSince = now;
    }
    return !busy && now - quietSince >= QUIET_MS;
  };

  const schedule = () => {
    if (running || timer || waiting.size === 0) return;
    timer = setTimeout(tick, POLL_MS);
    timer.unref?.(); // never what keeps the process up
  };

  const tick = () => {
    timer = undefined;
    if (!quiet()) return schedule();
    const [key, q] = waiting.entries().next().value!;
    waiting.delete(key);
    running = true;
    void options
      .inSlot(() =>
        options.sql.begin("isolation level repeatable read read only", async (tx) => {
          await tx.unsafe(lockRollupRead);
          await keepPartsIn(tx as unknown as Sql, q, options.store);
        }),
      )
      .catch((err: unknown) => options.debug?.("edges not kept", { month_from: q.monthFrom, month_to: q.monthTo, error: String((err as Error)?.message ?? err) }))
      .finally(() => {
        running = false;
        schedule();
        if (!running && waiting.size === 0) {
          const waiters = onSettled;
          onSettled = [];
          waiters.forEach((w) => w());
        }
      });
  };

  return {
    offer(q) {
      if (options.store.limitBytes === 0) return;
      const key = `${q.monthFrom}|${q.monthTo}`; // the segment is the rows', not the edges'
      if (waiting.has(key)) return;
      if (waiting.size >= MAX_WAITING) waiting.delete(waiting.keys().next().value!);
      waiting.set(key, q);
      schedule();
    },
    pending: () => waiting.size + (running ? 1 : 0),
    settled: () => (waiting.size === 0 && !running ? Promise.resolve() : new Promise((resolve) => onSettled.push(resolve))),
  };
}
