// One read of the database for one request, and the one owner of everything that read holds:
// its admission slot, its cursor (below), its deadlines, and while it opens, its interest in
// the request's signal. It goes through these states, and close(reason) is the only way out of
// any of them, releasing whatever is held at that point, once:
//
//   waiting    for an admission slot (src/answer/admission.ts);
//   opening    the statement sent, its first batch awaited under the first-answer and the
//              connection deadlines and the silence watch (silence.ts); the database guard
//              (database-guard.ts) learns from how this ends;
//   streaming  later batches taken as the body asks for them, the slot and connection held;
//   drained    the statement has ended: its batches are in memory, slot and connection given
//              back (a small answer frees both before its body is sent);
//   closed     the request's signal fired while it opened (client gone, REQUEST_TIMEOUT_MS), a
//              deadline passed, the statement failed, or its reader closed it.
//
// A read that makes an answer runs in one snapshot (openRead's `snapshot`): a read-only
// REPEATABLE READ transaction on a session of its own, whose first statement locks the tables
// it reads (ACCESS SHARE, what any SELECT takes) before the snapshot is taken, so every
// statement after it (the answer's version, the rendered answer, the rows) is planned after the
// snapshot and sees it. A lone statement in READ COMMITTED is planned first and takes its
// snapshot after: a refresh's commit in between (a month's partition attached, its first row
// folded and its note deleted) gave a plan without the partition and a snapshot without the
// note, and the row went missing (issue 52). The lock keeps a partition that the snapshot sees
// from being dropped before the plan is made.
//
// The first batch is fetched before the caller commits to a 200, so a dead database is
// still a clean 503. Once open, the read is its reader's to close (body.ts, through the
// source it reads from: src/body/encode.ts), and the request's signal reaches it by that one path:
// the body, cut by the signal, closes its source.

import type postgres from "postgres";
import type { Sql } from "../database/client.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import { DatabaseDeadlineError, isRetryableRead, isStrayCancel } from "../database/errors.ts";
import { identifyPeer } from "../database/not-postgresql.ts";
import type { SilenceWatch } from "../database/silence.ts";

/** A statement and its parameters; its rows come as arrays of the columns' bytes, undecoded (postgres.js raw()). */
export interface Statement {
  text: string;
  params: string[];
}

/** Admission slots: at most so many reads hold a connection at once (src/answer/admission.ts). */
export interface Slots {
  /** Resolves with the slot's release once one is free; rejects (503 OVERLOADED, the signal's reason) otherwise. */
  acquire(signal: AbortSignal): Promise<() => void>;
}

export interface ReadOptions {
  /** Aborted when the client goes away or the request's deadline passes: a read still opening is closed (an open one is its reader's to close). */
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
  /**
   * The application_name its session goes by while it reads (a snapshot's read: set with the
   * begin, for the transaction only), so that pg_stat_activity ties its statements to the
   * request: `<the pool's name> <request id>`. None: the pool's name.
   */
  sessionName?: string;
  /**
   * false: a failure while the read opens is not tried again (it is the second try of an
   * answer already read once before its first byte: product-costs-answer.ts). Default true.
   */
  retry?: boolean;
}

/**
 * The one snapshot a read's statements share: `lock`, a LOCK TABLE of every table they read,
 * runs before it is taken; `head`, a one-row statement, is read first (the answer's version,
 * which so names exactly the state of the rows read after it).
 */
export interface Snapshot {
  lock: string;
  head?: Statement;
}

/** A statement to try, and the rows a batch holds (none: its whole result is one batch). */
export interface Attempt {
  statement: Statement;
  batchSize?: number;
}

/**
 * Statements sent together and read whole (results a read needs all of before it can answer: a
 * range's edges): the read's one batch is one item, their results in this order.
 */
export interface Gather {
  gather: readonly Statement[];
}

/** What a read tries, in turn; or what it tries once the snapshot's head has been read, from that row. */
export type Plan = readonly (Attempt | Gather)[] | ((head: Buffer[]) => readonly (Attempt | Gather)[]);

export interface Read<T> {
  /** The row of the snapshot's `head` statement (its columns' bytes); undefined without one. */
  readonly head: Buffer[] | undefined;
  /** The first batch (may be empty). */
  readonly first: T[];
  /** Which of the attempts answered (see openRead). */
  readonly answered: number;
  /** The failure a first try met and a second one read past (a session ended, a conflict), for the request's log line. */
  readonly retriedAfter: unknown;
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
 * With `snapshot`, all of them (and its head) in one snapshot; without, each statement alone on
 * the pool (a statement that makes no answer: a one-row check). Attempts made from the head
 * (a function) are sent once it has been read: one round trip more.
 */
export async function openRead<T>(sql: Sql, attempts: Plan, options: ReadOptions, snapshot?: Snapshot): Promise<Read<T>> {
  const read = new DatabaseRead<T>(sql, options, snapshot);
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
  head: Buffer[] | undefined;
  first: T[] = [];
  answered = 0;
  retriedAfter: unknown = undefined;
  private state: State = "waiting";
  private session: Session | undefined;
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
    private readonly snapshot: Snapshot | undefined,
  ) {}

  async open(attempts: Plan): Promise<void> {
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
    this.options.signal?.removeEventListener("abort", this.onAbort); // the reader's from here
    if (this.cursor!.done()) await this.drained();
    else this.state = "streaming";
  }

  async next(): Promise<T[] | undefined> {
    if (this.state === "closed") throw this.reason;
    try {
      const batch = await this.watched(this.cursor!.next());
      if (batch) return batch;
      await this.drained();
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
    this.options.signal?.removeEventListener("abort", this.onAbort); // (closed while opening)
    try {
      if (was !== "drained") {
        await this.cursor?.close();
        await this.endSession("stopped");
      }
    } finally {
      this.release?.();
      this.release = undefined;
    }
  }

  /** The statement has ended: the session is the pool's again, and the slot is given back. */
  private async drained(): Promise<void> {
    this.state = "drained";
    try {
      await this.endSession("whole");
    } finally {
      this.release?.();
      this.release = undefined;
    }
  }

  /** The session's end (its transaction committed or rolled back, its connection the pool's again), once. */
  private async endSession(how: SessionEnd): Promise<void> {
    const session = this.session;
    this.session = undefined;
    await session?.end(how);
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

  private async firstAnswer(attempts: Plan): Promise<void> {
    const { firstBatchTimeoutMs, connectTimeoutMs, silence } = this.options;
    this.timers.push(setTimeout(() => void this.close(new DatabaseDeadlineError(firstBatchTimeoutMs)), firstBatchTimeoutMs));
    const watch = silence?.watch();
    watch?.silent.catch((err) => void this.close(err));
    if (connectTimeoutMs !== undefined) {
      // A query may wait for a connection for ever: with several hosts all down, postgres.js
      // tries them in turn without end (porsager/postgres#1174).
      this.timers.push(
        setTimeout(() => {
          if (this.session?.onConnection() || this.cursor?.onConnection()) return;
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
      for (let retried = false; ; retried = true) {
        try {
          return await this.firstAnswerOnce(attempts);
        } catch (failure) {
          if (this.state === "closed") throw this.reason;
          // What failed aborted the transaction (or was the cursor's own statement): a statement
          // sent after it fails by itself at once. Waited for, not cancelled (a cancel that lands
          // after it ended would spoil the retry's statement).
          await this.cursor?.ended();
          await this.endSession("failed");
          // A server that is not PostgreSQL is told apart first: a retry would only ask it again.
          const err = await identifyPeer(failure, this.sql);
          // A connection that died while idle (database restarted) fails its next query once; a
          // stray cancel (one sent for an earlier query on this connection), a standby's recovery
          // conflict and a lock conflict (a deadlock's victim, a lock timeout) likewise. The read
          // is idempotent, so one retry on a fresh session hides that. The one retry of a read:
          // an answer whose read fails after it opened, before its first byte, is read once more
          // only when this one did not retry (product-costs-answer.ts), and then without one.
          if (!retried && this.options.retry !== false && (isRetryableRead(err) || isStrayCancel(err))) {
            this.retriedAfter = err;
            continue;
          }
          throw err;
        }
      }
    } finally {
      this.timers.forEach(clearTimeout);
      watch?.stop();
    }
  }

  /**
   * The session, the snapshot's head, and the first batch of the first attempt with rows (or of
   * the last). The begin, the head and the first attempt are sent together (one round trip);
   * their answers are then taken in that order, so a begin that failed is reported as itself,
   * not as the "transaction is aborted" of every statement after it.
   */
  private async firstAnswerOnce(attempts: Plan): Promise<void> {
    const session = (this.session = this.snapshot ? snapshotSession(this.sql, this.snapshot, this.options.sessionName) : poolSession(this.sql));
    const sql = await this.untilClosed(session.sql);
    const head = this.snapshot?.head ? firstRow(sql, this.snapshot.head) : undefined;
    head?.catch(() => {}); // taken below, unless the begin failed first
    const taken = async () => {
      await this.untilClosed(session.begun);
      if (head) this.head = await this.untilClosed(head);
    };
    let plan: readonly (Attempt | Gather)[];
    if (typeof attempts === "function") {
      await taken();
      plan = attempts(this.head!);
    } else plan = attempts;
    for (const [i, attempt] of plan.entries()) {
      this.cursor = "gather" in attempt ? openGather<T>(sql, attempt.gather) : openCursor<T>(sql, attempt.statement, attempt.batchSize);
      const batch = this.cursor.next();
      batch.catch(() => {}); // a failure after a deadline or an abort is close()'s business
      if (i === 0 && typeof attempts !== "function") await taken();
      const first = (await this.untilClosed(batch)) ?? [];
      if (first.length > 0 || i === plan.length - 1) {
        this.first = first;
        this.answered = i;
        return;
      }
      await this.cursor.close(); // no row: the next attempt (an empty result has already ended)
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

// The session a read's statements run on: the pool itself (each statement alone), or one
// connection of its own holding the snapshot's transaction from its first statement to its end.

/**
 * How a session ends: `whole`, every statement ended of itself; `failed`, one failed (the
 * transaction is aborted, every statement after it fails at once: nothing to stop); `stopped`,
 * the read was closed (a deadline, the client gone) while one may still run.
 */
type SessionEnd = "whole" | "failed" | "stopped";

interface Session {
  /** The connection to run the statements on, once there is one: what is sent on it goes after the snapshot's begin. */
  readonly sql: Promise<Sql>;
  /** Rejects with the begin's failure (the statements after it then fail only for that). */
  readonly begun: Promise<unknown>;
  /** Whether the session has its connection (the connection deadline): for the pool, its cursor knows. */
  onConnection(): boolean;
  /** Ends the session. Never throws. */
  end(how: SessionEnd): Promise<void>;
}

function poolSession(sql: Sql): Session {
  return {
    sql: Promise.resolve(sql),
    begun: Promise.resolve(),
    onConnection: () => false,
    end: async () => {},
  };
}

/** The first row of `statement` (its columns' bytes), sent now on `sql`. */
function firstRow(sql: Sql, statement: Statement): Promise<Buffer[] | undefined> {
  return sql
    .unsafe(statement.text, statement.params, { prepare: true })
    .raw()
    .execute()
    .then((rows) => (rows as unknown as Buffer[][])[0]);
}

/** What begins a snapshot: its tables are locked before it is taken (a utility statement takes no snapshot). */
function beginSnapshot(snapshot: Snapshot): string {
  return `begin isolation level repeatable read read only;\n${snapshot.lock}`;
}

/**
 * A connection of its own, reserved from the pool, in a read-only REPEATABLE READ transaction
 * whose first statement locks the snapshot's tables; named `name` for the transaction (sent
 * with the begin, a bound parameter: no round trip more; undone by its commit or rollback).
 */
function snapshotSession(pool: Sql, snapshot: Snapshot, name?: string): Session {
  let reserved: postgres.ReservedSql | undefined;
  let ended = false;
  let begin: postgres.PendingQuery<postgres.Row[]> | undefined;
  let named: postgres.PendingQuery<postgres.Row[]> | undefined;
  let begunSettled = false;
  const connection = pool.reserve().then((r) => {
    if (ended) {
      r.release(); // the read ended while it waited for a connection
      throw new Error("the read ended before it had a connection");
    }
    reserved = r;
    begin = r.unsafe(beginSnapshot(snapshot));
    begin.execute(); // sent now: before anything the read sends once it has the connection
    if (name !== undefined) {
      // Prepared, as every statement of a read: described on every run, it cost a round trip more.
      named = r.unsafe("select set_config('application_name', $1, true)", [name], { prepare: true });
      named.execute();
      named.catch(() => {}); // a begin that failed is reported as itself (below)
    }
    return r;
  });
  connection.catch(() => {}); // awaited by the read, or by nobody once it ended
  const begun = connection
    .then(async () => {
      await begin!;
      await named;
    })
    .finally(() => (begunSettled = true));
  begun.catch(() => {}); // awaited by the read once it sent what follows
  return {
    sql: connection,
    begun,
    onConnection: () => reserved !== undefined,
    async end(how) {
      ended = true;
      const r = reserved;
      reserved = undefined;
      if (!r) return;
      // The begin still running (its lock waited for) is stopped first (a statement after it is
      // its cursor's to stop). Only when the read was stopped: a cancel for a statement that ends
      // meanwhile lands on the next one this connection runs, maybe a retry's after the pool lent
      // it again.
      if (how === "stopped" && !begunSettled) begin?.cancel();
      // Committed when whole (a DBA's rollback ratio counts failures), else rolled back; a
      // cancel sent for a statement that had just ended lands on the next one on the
      // connection, the rollback: once more, so that the connection never goes back to the
      // pool inside a transaction. A connection that died fails both, harmlessly. Bounded: a
      // silent server is the silence watch's business, and statements on one connection run
      // in the order sent, so one given to the pool meanwhile waits for the rollback.
      const ending = how === "whole" ? r.unsafe("commit").catch(() => r.unsafe("rollback")) : r.unsafe("rollback").catch(() => r.unsafe("rollback"));
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        await Promise.race([ending, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_SETTLE_MS)))]);
      } catch {
        // the connection is gone: postgres.js opens another when one is needed
      } finally {
        clearTimeout(timer);
        r.release();
      }
    },
  };
}

// The statement's cursor: read in batches through postgres.js, so that a large answer never
// sits in memory whole: the server is asked for the next batch only when the one before has
// been taken. What follows speaks postgres.js's cursor protocol and nothing else; the read
// above owns the cursor (its slot, its deadlines, who may close it).

interface Cursor<T> {
  /** The next batch, or undefined at the statement's end. Throws the statement's failure. */
  next(): Promise<T[] | undefined>;
  /** True once the statement has completed or failed: the connection is the pool's again. */
  done(): boolean;
  /** Settles once the statement has completed or failed (at most CANCEL_SETTLE_MS later). */
  ended(): Promise<void>;
  /** Whether postgres.js has handed the query to a connection yet (the connection deadline). */
  onConnection(): boolean;
  /**
   * Stops early: closes the portal if it waits for us, else cancels the statement the server
   * is working on and waits (a bounded time) for it to end. Safe to call twice.
   */
  close(): Promise<void>;
}

/** The statements of a Gather as one cursor: sent together, each read whole; one batch, of one item (their results). */
function openGather<T>(sql: Sql, statements: readonly Statement[]): Cursor<T> {
  const cursors = statements.map((statement) => openCursor<Buffer[]>(sql, statement, undefined));
  let taken = false;
  return {
    onConnection: () => cursors.some((c) => c.onConnection()),
    done: () => cursors.every((c) => c.done()),
    ended: async () => void (await Promise.all(cursors.map((c) => c.ended()))),
    async next() {
      if (taken) return undefined;
      taken = true;
      const results = await Promise.all(cursors.map(async (c) => (await c.next()) ?? []));
      return [results as T];
    },
    close: async () => void (await Promise.all(cursors.map((c) => c.close()))),
  };
}

// How long close() waits for a cancelled statement to end before it stops waiting; the
// connection is then the pool's business (a dead server fails it, a live one answers).
const CANCEL_SETTLE_MS = 5000;

/** A cursor on `statement`, `batchSize` rows at a time; none: the whole result at once (for a result known to be small). */
function openCursor<T>(sql: Sql, statement: Statement, batchSize: number | undefined): Cursor<T> {
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

  return {
    // postgres.js private behaviour, pinned by tests/db/postgres-js-surface.test.ts: a query's
    // `state` is set once the query is handed to an open connection.
    onConnection: () => Boolean((query as unknown as { state?: unknown }).state),
    done: () => complete || outcome !== undefined,
    async ended() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([settled, new Promise((resolve) => (timer = setTimeout(resolve, CANCEL_SETTLE_MS)))]);
      clearTimeout(timer);
    },
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
}
