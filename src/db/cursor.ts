// One statement read in batches through a postgres.js cursor, so that a large answer never
// sits in memory whole: the server is asked for the next batch only when the one before has
// been taken. This file speaks postgres.js's cursor protocol and nothing else; the read that
// owns a cursor (its slot, its deadlines, who may close it) is read.ts.

import type { Sql } from "./client.ts";

/** A statement and its parameters; its rows come as arrays of the columns' bytes, undecoded (postgres.js raw()). */
export interface Statement {
  text: string;
  params: string[];
}

export interface Cursor<T> {
  /** The next batch, or undefined at the statement's end. Throws the statement's failure. */
  next(): Promise<T[] | undefined>;
  /** True once the statement has completed or failed: the connection is the pool's again. */
  done(): boolean;
  /**
   * Stops early: closes the portal if it waits for us, else cancels the statement the server
   * is working on and waits (a bounded time) for it to end. Safe to call twice.
   */
  close(): Promise<void>;
}

// How long close() waits for a cancelled statement to end before it stops waiting; the
// connection is then the pool's business (a dead server fails it, a live one answers).
const CANCEL_SETTLE_MS = 5000;

/** Whether postgres.js has handed the query to a connection yet (see read.ts: the connection deadline). */
export function onConnection(cursor: Cursor<unknown>): boolean {
  return Boolean((cursor as CursorImpl<unknown>).query.state);
}

interface CursorImpl<T> extends Cursor<T> {
  // postgres.js private behaviour, pinned by tests/db/postgres-js-surface.test.ts: a query's
  // `state` is set once the query is handed to an open connection.
  query: { state?: unknown };
}

/** A cursor on `statement`, `batchSize` rows at a time; none: the whole result at once (for a result known to be small). */
export function openCursor<T>(sql: Sql, statement: Statement, batchSize: number | undefined): Cursor<T> {
  // Prepared (postgres.js's unsafe() is not, by default): a statement with parameters is
  // otherwise described on every run, one more round trip before it executes; prepared, only
  // on a connection's first run of it. Still planned anew each run (SERVING_SETTINGS).
  const query = sql.unsafe(statement.text, statement.params, { prepare: true }).raw();
  const delivered: T[][] = []; // batches not taken yet
  let resume: ((next?: unknown) => void) | undefined; // set while the portal waits for us
  let outcome: { failure?: unknown } | undefined; // set once the statement completed or failed
  // A batch shorter than asked came: the statement completed (PostgreSQL sends fewer rows only
  // with its completion, and postgres.js hands batches on as sent: postgres-js-surface.test.ts).
  // Its answer is whole even if the connection dies before the server says it is ready again.
  let complete = false;
  let closing = false;
  let arrived = () => {};
  let arrival = Promise.resolve(); // the next batch or the outcome
  const signal = () => (arrived(), (arrival = new Promise((resolve) => (arrived = resolve))));
  signal();
  // The cursor in its callback form: each batch goes to the callback, and the server is asked
  // for the next only once the promise it returned resolves (with sql.CLOSE the portal is
  // closed instead, ending its transaction). The query settles when the statement completes
  // or fails, a lost connection included: a read cut short never ends as if whole.
  // Without a batch size, the statement's result is one batch: no portal kept open, so one
  // round trip instead of two (a cursor's Sync is sent only once the statement has completed).
  const running = (
    batchSize === undefined
      ? query.then((rows) => {
          delivered.push(rows as unknown as T[]);
          complete = true;
        })
      : query.cursor(batchSize, (rows) => {
          if (closing) return sql.CLOSE as unknown as void;
          delivered.push(rows as T[]);
          complete ||= rows.length < batchSize;
          signal();
          return new Promise((resolve) => (resume = resolve)) as unknown as void;
        })
  ) as Promise<unknown>;
  const settled = running.then(
    // Blocks, not expressions: signal() returns the next arrival, and `settled` would wait for it.
    () => {
      outcome = {};
      signal();
    },
    (failure: unknown) => {
      outcome = { failure };
      signal();
    },
  );

  const cursor: CursorImpl<T> = {
    query: query as unknown as { state?: unknown },
    done: () => complete || outcome !== undefined,
    async next() {
      while (!delivered.length && !complete && !outcome) {
        const next = arrival;
        resume?.(); // ask for the next batch
        resume = undefined;
        await next;
      }
      if (delivered.length || complete) return delivered.shift();
      if ("failure" in outcome!) throw outcome.failure;
      return undefined;
    },
    async close() {
      if (closing) return;
      closing = true;
      // Never once the query settled: postgres.js would write to a socket it already dropped.
      // Nor once it completed: nothing is left to stop.
      if (outcome || complete) return;
      if (resume) return resume(sql.CLOSE); // the portal waits for us: close it
      // Cancel only a statement the server is working on (a batch it sends meanwhile closes the
      // portal, above). A cancel request sent while the portal waits for us is not consumed,
      // and would land on whatever query runs next on that connection.
      query.cancel();
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_SETTLE_MS)))]);
      clearTimeout(timer);
    },
  };
  return cursor;
}
