// One read of the database for one request, and the one owner of everything that read holds:
// its admission slot, its cursor (cursor.ts), its deadlines and its interest in the
// request's signal. It goes through these states, and close(reason) is the only way out of
// any of them, releasing whatever is held at that point, once:
//
//   waiting    for an admission slot (src/http/admission.ts);
//   opening    the statement sent, its first batch awaited under the first-answer and the
//              connection deadlines and the silence watch (silence.ts); the database guard
//              (database-guard.ts) learns from how this ends;
//   streaming  later batches taken as the body asks for them, the slot and connection held;
//   drained    the statement has ended: its batches are in memory, slot and connection given
//              back (a small answer frees both before its body is sent);
//   closed     the request's signal fired (client gone, REQUEST_TIMEOUT_MS), a deadline
//              passed, the statement failed, or the body is done.
//
// The first batch is fetched before the caller commits to a 200, so a dead database is
// still a clean 503.

import type { Sql } from "./client.ts";
import { onConnection, openCursor, type Cursor, type Statement } from "./cursor.ts";
import type { DatabaseGuard } from "./database-guard.ts";
import { DatabaseDeadlineError, isRetryableRead, isStrayCancel } from "./errors.ts";
import { identifyPeer } from "./not-postgresql.ts";
import type { SilenceWatch } from "./silence.ts";

export type { Statement } from "./cursor.ts";

/** Admission slots: at most so many reads hold a connection at once (src/http/admission.ts). */
export interface Slots {
  /** Resolves with the slot's release once one is free; rejects (503 OVERLOADED, the signal's reason) otherwise. */
  acquire(signal: AbortSignal): Promise<() => void>;
}

export interface ReadOptions {
  /** Aborted when the client goes away or the request's deadline passes: the read is closed wherever it stands. */
  signal?: AbortSignal;
  /** Deadline for the first batch; past it the statement is cancelled and DatabaseDeadlineError thrown. */
  firstBatchTimeoutMs: number;
  /** Deadline for getting a connection at all (postgres.js may wait for one for ever: see below). */
  connectTimeoutMs?: number;
  /** Tells a silent database from a slow one while a batch is awaited: past about DB_CONNECT_TIMEOUT_MS of silence the read fails with DatabaseSilentError. */
  silence?: SilenceWatch;
  /** None: no bound on concurrent reads. */
  slots?: Slots;
  /** None: every read tries the database. */
  guard?: DatabaseGuard;
}

/** A statement to try, and the rows a batch holds (none: its whole result is one batch). */
export interface Attempt {
  statement: Statement;
  batchSize?: number;
}

export interface Read<T> {
  /** The first batch (may be empty). */
  readonly first: T[];
  /** Which of the attempts answered (see openRead). */
  readonly answered: number;
  /** The next batch after `first`, or undefined at the end. Throws the reason when the read was closed early: never ends as if whole. */
  next(): Promise<T[] | undefined>;
  /** Ends the read: the statement cancelled if running, the cursor closed, the slot given back. Safe to call twice. */
  close(reason?: unknown): Promise<void>;
}

const NEVER = new AbortController().signal;

type State = "waiting" | "opening" | "streaming" | "drained" | "closed";

/**
 * Opens a read of the first of `attempts` that returns rows, or of the last one: each is run
 * in turn in the one slot, and one that returns no row is closed before the next is tried.
 */
export async function openRead<T>(sql: Sql, attempts: readonly Attempt[], options: ReadOptions): Promise<Read<T>> {
  const read = new DatabaseRead<T>(sql, options);
  await read.open(attempts);
  return read;
}

/** The one row of a one-row statement (its columns' bytes), read with a read's protections. */
export async function readRow(sql: Sql, statement: Statement, options: ReadOptions): Promise<Buffer[] | undefined> {
  const read = await openRead<Buffer[]>(sql, [{ statement }], options);
  await read.close(); // a one-row result has ended already: nothing to cancel
  return read.first[0];
}

class DatabaseRead<T> implements Read<T> {
  first: T[] = [];
  answered = 0;
  private state: State = "waiting";
  private cursor: Cursor<T> | undefined;
  private release: (() => void) | undefined;
  /** Why the read was closed; what a pending or later wait throws. */
  private reason: unknown;
  /** Fails the wait in progress (the read waits for one thing at a time) when the read is closed. */
  private interrupt: ((reason: unknown) => void) | undefined;
  private readonly timers: ReturnType<typeof setTimeout>[] = [];
  private readonly onAbort = () => void this.close(this.options.signal!.reason);

  constructor(
    private readonly sql: Sql,
    private readonly options: ReadOptions,
  ) {}

  async open(attempts: readonly Attempt[]): Promise<void> {
    const { signal = NEVER, slots, guard } = this.options;
    signal.throwIfAborted();
    signal.addEventListener("abort", this.onAbort, { once: true });
    try {
      if (slots) {
        const slot = slots.acquire(signal);
        // Kept, or given back at once when the read was closed while it waited.
        slot.then((release) => (this.state === "closed" ? release() : (this.release = release)), () => {});
        await this.untilClosed(slot);
      }
      this.state = "opening";
      const first = () => this.firstAnswer(attempts);
      await (guard ? guard.run(first) : first());
    } catch (err) {
      // Answer now; cancelling and closing go on in the background.
      void this.close(err);
      throw this.reason ?? err;
    }
    if (this.cursor!.done()) this.drained();
    else this.state = "streaming";
  }

  async next(): Promise<T[] | undefined> {
    if (this.state === "closed") throw this.reason;
    try {
      const batch = await this.watched(this.cursor!.next());
      if (batch) return batch;
      this.drained();
      return undefined;
    } catch (err) {
      await this.close(err);
      throw this.reason;
    }
  }

  async close(reason: unknown = new Error("the read was closed before its end")): Promise<void> {
    const was = this.state;
    if (was === "closed") return;
    this.state = "closed";
    this.reason = reason;
    this.interrupt?.(reason);
    this.timers.forEach(clearTimeout);
    this.options.signal?.removeEventListener("abort", this.onAbort);
    try {
      if (was !== "drained") await this.cursor?.close();
    } finally {
      this.release?.();
      this.release = undefined;
    }
  }

  /** The statement has ended: the connection is the pool's again, and the slot is given back. */
  private drained(): void {
    this.state = "drained";
    this.release?.();
    this.release = undefined;
    this.options.signal?.removeEventListener("abort", this.onAbort);
  }

  /**
   * `work`, unless the read is closed first (then its reason is thrown). Not a race against one
   * promise of the whole read: each race would stay attached to it, holding the batch it
   * resolved with, so a read kept every batch it had read until it was let go.
   */
  private untilClosed<R>(work: Promise<R>): Promise<R> {
    if (this.state === "closed") return Promise.reject(this.reason);
    return new Promise<R>((resolve, reject) => {
      this.interrupt = reject;
      work.then(resolve, reject).finally(() => {
        if (this.interrupt === reject) this.interrupt = undefined;
      });
    });
  }

  private async firstAnswer(attempts: readonly Attempt[]): Promise<void> {
    const { firstBatchTimeoutMs, connectTimeoutMs, silence } = this.options;
    this.timers.push(setTimeout(() => void this.close(new DatabaseDeadlineError(firstBatchTimeoutMs)), firstBatchTimeoutMs));
    const watch = silence?.watch();
    watch?.silent.catch((err) => void this.close(err));
    if (connectTimeoutMs !== undefined) {
      // A query may wait for a connection for ever: with several hosts all down, postgres.js
      // tries them in turn without end (porsager/postgres#1174).
      this.timers.push(
        setTimeout(() => {
          if (!this.cursor || onConnection(this.cursor)) return;
          const late = () => void this.close(new DatabaseDeadlineError(connectTimeoutMs, "connection"));
          // A silence watch gives its verdict about now: a silent database is told as such (a
          // problem the guard holds back on), not as this read's own deadline, which the guard
          // takes for this request's failure alone (each next request would wait as long).
          if (watch) this.timers.push(setTimeout(late, Math.ceil(connectTimeoutMs / 2)));
          else late();
        }, connectTimeoutMs),
      );
    }
    try {
      for (const [i, attempt] of attempts.entries()) {
        const first = await this.firstBatch(attempt);
        if (first.length > 0 || i === attempts.length - 1) {
          this.first = first;
          this.answered = i;
          return;
        }
        await this.cursor!.close(); // no row: the next attempt (an empty result has already ended)
      }
    } finally {
      this.timers.forEach(clearTimeout);
      watch?.stop();
    }
  }

  /** The first batch of `attempt`, retried once on a fresh connection for a failure a fresh connection hides. */
  private async firstBatch(attempt: Attempt): Promise<T[]> {
    for (let retried = false; ; retried = true) {
      this.cursor = openCursor<T>(this.sql, attempt.statement, attempt.batchSize);
      const head = this.cursor.next();
      head.catch(() => {}); // a failure after a deadline or an abort is close()'s business
      try {
        return (await this.untilClosed(head)) ?? [];
      } catch (failure) {
        if (this.state === "closed") throw this.reason;
        // A server that is not PostgreSQL is told apart first: a retry would only ask it again.
        const err = await identifyPeer(failure, this.sql);
        // A connection that died while idle (database restarted) fails its next query once; a
        // stray cancel (one sent for an earlier query on this connection) and a standby's
        // recovery conflict likewise. The read is idempotent, so one retry on a fresh
        // connection hides that.
        if (!retried && (isRetryableRead(err) || isStrayCancel(err))) continue;
        throw err;
      }
    }
  }

  /** A later batch, unless the read is closed or the database goes silent meanwhile. */
  private async watched(batch: Promise<T[] | undefined>): Promise<T[] | undefined> {
    batch.catch(() => {}); // after a close or a silence, close()'s business
    const watch = this.options.silence?.watch();
    watch?.silent.catch((err) => void this.close(err));
    try {
      return await this.untilClosed(batch);
    } finally {
      watch?.stop();
    }
  }
}
