// The refresh (migrations 0006 to 0008): folds the notes writers left (product_cost_deltas)
// into the months (product_cost_months), then renders the answers of the calendar periods
// that lack one. Writers never wait for it and reads are exact without it; it keeps reads
// fast and the log short. One refresh at a time (an advisory lock held for its whole run):
// `migrate`, `load-csv` and `refresh` run it; a systemd timer runs `refresh` every minute, or
// the service runs it itself when given an owner's URL (README).
//
// It works in steps, each a transaction of its own, so that no snapshot is held for long (a
// long one holds back vacuum in the whole database) and a stopped refresh keeps what its
// finished steps did. Reads are exact between any two steps: a read is the months plus the
// notes waiting, and each step moves a set of notes into the months and deletes exactly those
// notes in one commit (docs/performance.md).
//   1. fold: the products the log names, in ranges of ids of about STEP_ROWS month rows each
//      (a product's months never split). A step reads its notes at its snapshot, computes
//      again from the daily rows every (product, month) they name, moves the totals before
//      every later month of those products, drops the rendered answers they make stale,
//      counts them for the answer versions and deletes them. When the data reached a later
//      month, the first step also adds it: every product's months reach it (rows that carry
//      the totals and hold no day: what a read assumed without them), with the months'
//      statistics made again in the same commit, so that no plan, a read's or the refresh's,
//      ever meets a month the statistics do not know.
//   2. finish: the notes of products' attributes (every rendered answer is redone) and, for a
//      rebuild, of everything; the refresh's record.
//   3. answers: each calendar period without one is rendered in a transaction of its own, two
//      at a time. An answer rendered from months that a later write makes stale is never
//      trusted: that write's note names its period until the next refresh drops the answer.
//   4. vacuum: the log after a fold; the months and answers with the answers' upkeep (the
//      refreshes that run every minute leave both to one that has nothing to fold: EVERY_MINUTE).
// A rebuild (`refresh --rebuild`, a TRUNCATE's note of everything, migrate) first notes
// everything and empties the months in one commit: until its last step deletes that note,
// reads add up the daily rows (exact, slower), so the months can be refilled step by step,
// two steps at a time (each keeps a server core busy; the products are disjoint).
//
// What to do is decided by refresh-plan.ts from state.sql's row alone; this file runs it. It
// runs on this build's schema only: on an older one it says what `migrate` would apply and
// stops (reads stay exact meanwhile, from the daily rows: read-source.ts).
//
// Plans: the statistics of the tables the refresh writes are stale by the time it reads them
// (it changes them itself; autovacuum may be off or behind), so no plan of the refresh depends
// on them. Its steps run with nested loops off (every join hashes: one pass over each side),
// and the only nested loops are the lookups it writes as such: a lateral subquery that finds a
// month row or a pair's daily rows by key, one product at a time (docs/performance.md).

import carryMonthSql from "../../sql/refresh/carry_month.sql" with { type: "text" };
import clearAnswersSql from "../../sql/refresh/clear_answers.sql" with { type: "text" };
import collectChangesSql from "../../sql/refresh/collect_changes.sql" with { type: "text" };
import countFoldedSql from "../../sql/refresh/count_folded.sql" with { type: "text" };
import coverMonthsSql from "../../sql/refresh/cover_months.sql" with { type: "text" };
import batchesSql from "../../sql/refresh/batches.sql" with { type: "text" };
import buildMonthsSql from "../../sql/refresh/build_months.sql" with { type: "text" };
import deleteAnswerSql from "../../sql/refresh/delete_answer.sql" with { type: "text" };
import deleteMonthsSql from "../../sql/refresh/delete_months.sql" with { type: "text" };
import extendMonthsSql from "../../sql/refresh/extend_months.sql" with { type: "text" };
import forgetChangesSql from "../../sql/refresh/forget_changes.sql" with { type: "text" };
import insertMonthsSql from "../../sql/refresh/insert_months.sql" with { type: "text" };
import missingAnswersSql from "../../sql/refresh/missing_answers.sql" with { type: "text" };
import notesOutsideSql from "../../sql/refresh/notes_outside.sql" with { type: "text" };
import monthRowsSql from "../../sql/refresh/month_rows.sql" with { type: "text" };
import outsideNotesSql from "../../sql/refresh/outside_notes.sql" with { type: "text" };
import prepareWritesSql from "../../sql/refresh/prepare_writes.sql" with { type: "text" };
import recordFailureSql from "../../sql/refresh/record_failure.sql" with { type: "text" };
import recordRefreshSql from "../../sql/refresh/record_refresh.sql" with { type: "text" };
import recordStartSql from "../../sql/refresh/record_start.sql" with { type: "text" };
import recordWindowSql from "../../sql/refresh/record_window.sql" with { type: "text" };
import renderAnswerSql from "../../sql/refresh/render_answer.sql" with { type: "text" };
import startMonthSql from "../../sql/refresh/start_month.sql" with { type: "text" };
import stateSql from "../../sql/refresh/state.sql" with { type: "text" };
import stepNotesSql from "../../sql/refresh/step_notes.sql" with { type: "text" };
import updateMonthsSql from "../../sql/refresh/update_months.sql" with { type: "text" };
import windowSql from "../../sql/refresh/window.sql" with { type: "text" };
import analyzeAnswersSql from "../../sql/refresh/analyze_answers.sql" with { type: "text" };
import analyzeDailyRowsSql from "../../sql/refresh/analyze_daily_rows.sql" with { type: "text" };
import analyzeMonthsSql from "../../sql/refresh/analyze_months.sql" with { type: "text" };
import countEverythingNotesSql from "../../sql/refresh/count_everything_notes.sql" with { type: "text" };
import countStepNotesSql from "../../sql/refresh/count_step_notes.sql" with { type: "text" };
import dropPartitionsAfterSql from "../../sql/refresh/drop_partitions_after.sql" with { type: "text" };
import emptyRollupAnswersSql from "../../sql/refresh/empty_rollup_answers.sql" with { type: "text" };
import emptyRollupMonthsSql from "../../sql/refresh/empty_rollup_months.sql" with { type: "text" };
import extendFirstMonthSql from "../../sql/refresh/extend_first_month.sql" with { type: "text" };
import lockSql from "../../sql/refresh/lock.sql" with { type: "text" };
import lockTimeoutSql from "../../sql/refresh/lock_timeout.sql" with { type: "text" };
import noteRebuildSql from "../../sql/refresh/note_rebuild.sql" with { type: "text" };
import sessionResetSql from "../../sql/refresh/session_reset.sql" with { type: "text" };
import sessionSettingsSql from "../../sql/refresh/session_settings.sql" with { type: "text" };
import statisticsTargetSql from "../../sql/refresh/statistics_target.sql" with { type: "text" };
import transactionSettingsSql from "../../sql/refresh/transaction_settings.sql" with { type: "text" };
import tryLockSql from "../../sql/refresh/try_lock.sql" with { type: "text" };
import unlockSql from "../../sql/refresh/unlock.sql" with { type: "text" };
import vacuumSql from "../../sql/refresh/vacuum.sql" with { type: "text" };
import vacuumRebuiltSql from "../../sql/refresh/vacuum_rebuilt.sql" with { type: "text" };
import monthPairsSql from "../../sql/refresh/month_pairs.sql" with { type: "text" };
import stepDensitySql from "../../sql/refresh/step_density.sql" with { type: "text" };
import stepFirstMonthSql from "../../sql/refresh/step_first_month.sql" with { type: "text" };
import stepProductsSql from "../../sql/refresh/step_products.sql" with { type: "text" };
import unfoldedProductSql from "../../sql/refresh/unfolded_product.sql" with { type: "text" };
import postgres from "postgres";
import type { Sql } from "../database/client.ts";
import { isDatabaseUnavailable } from "../database/errors.ts";
import { migrationsToApply } from "./migrations.ts";
import { databaseProblem, DatabaseProblemError, problem, type DatabaseProblem } from "../database/problems.ts";
import { WINDOW_GAP_MONTHS, type MonthsWindow } from "./months-window.ts";
import { planFold, type RefreshState, type StepProducts } from "./refresh-plan.ts";

/** Any fixed number, another than migrate's: all refreshes take the same lock. */
export const REFRESH_LOCK_ID = 74_201_312;
/** Answers rendered, or a rebuild's steps folded, at once: each on a session of its own (the pool permitting). */
const SESSIONS_AT_ONCE = 2;
/**
 * How the refreshes that run every minute (`refresh`, the service's own) keep up what only
 * speeds reads: a refresh that folded notes is done once they are folded (and the log
 * vacuumed), so a write is folded in the time the fold takes; the next refresh with nothing to
 * fold renders stale answers for up to two seconds, latest periods first, and vacuums the
 * months and answers when they hold dead rows. A rename (every answer stale) is rendered
 * again over a few idle minutes; meanwhile those periods read from the months, exactly.
 */
export const EVERY_MINUTE: Pick<RefreshOptions, "upkeepWhenIdle" | "renderBudgetMs"> = { upkeepWhenIdle: true, renderBudgetMs: 2_000 };
/**
 * Month rows a fold step writes at most (unless one product alone has more): a step takes
 * about a second per 100,000 at 50,000 products, so a rebuild commits every few seconds.
 */
const STEP_ROWS = 200_000;

export type RefreshStep = "prepare" | "fold" | "finish" | "answers" | "vacuum";

export interface RefreshProgress {
  step: "totals" | "answers";
  done: number;
  total: number;
}

export interface RefreshReport {
  /** rebuild: everything from the daily rows; changes: what the log named; none: nothing to fold in. */
  mode: "rebuild" | "changes" | "none";
  /** Log rows folded in. */
  notes: number;
  /** Fold steps (transactions) it took. */
  steps: number;
  /** Calendar periods whose answers were rendered (each for the three segments). */
  answers: number;
  /** Calendar periods left without an answer for the next refresh (past renderBudgetMs). */
  answers_waiting: number;
  ms: number;
  /** Milliseconds each part took (the parts that ran). */
  step_ms: Partial<Record<RefreshStep, number>>;
}

export interface RefreshOptions {
  /** Rebuild everything, whatever the log says. */
  rebuild?: boolean;
  /** Wait for a refresh already running (default); false: return null at once instead. */
  wait?: boolean;
  /**
   * Stops the refresh: its statement is cancelled in PostgreSQL, the step it was in rolls
   * back (the steps before it stay), the lock is released and the refresh rejects.
   */
  signal?: AbortSignal;
  onProgress?: (progress: RefreshProgress) => void;
  /** Month rows a fold step writes at most (default STEP_ROWS): tests make steps small. */
  stepRows?: number;
  /** How steps find month rows, whatever their density (tests: both ways): true in key order, false by key. */
  dense?: boolean;
  /**
   * No answer starts rendering once rendering has run this long (default: no limit). The rest
   * are rendered by the next refreshes, latest periods first; their reads add up the months
   * meanwhile (exact, slower).
   */
  renderBudgetMs?: number;
  /** Render answers and vacuum the months and answers only when there was nothing to fold (EVERY_MINUTE). */
  upkeepWhenIdle?: boolean;
}

/** The row state.sql reads (refresh-plan.ts's RefreshState, as PostgreSQL sends it). */
interface StateRow {
  everything: boolean;
  notes: number;
  window_first: string | null;
  window_last: string | null;
  outside_before: string | null;
  outside_after: string | null;
  months_last_month: string | null;
  notes_first_month: string | null;
  notes_last_month: string | null;
  first_product: string | null;
  last_product: string | null;
  named_outside: string[];
}

type Session = Awaited<ReturnType<Sql["reserve"]>>;

/** The first day of the month after `month` (YYYY-MM-01). */
function nextMonth(month: string): string {
  const k = Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)); // the next month's index, 0-based
  return `${String(Math.floor(k / 12)).padStart(4, "0")}-${String((k % 12) + 1).padStart(2, "0")}-01`;
}

/** Why a refresh stops when its signal fires. */
export class RefreshStopped extends Error {
  override name = "RefreshStopped";
}

/** A product whose notes a step could not fold: what it was folding, and why. */
export interface UnfoldedProduct {
  product_id: string;
  /** The months its notes name (the first twelve). */
  months: string[];
  notes: number;
  /** Its daily rows in those months. */
  rows: number;
  error: string;
}

/**
 * The refresh folded what it could, but not these products' notes: they wait (reads add them
 * up, exactly) and the next refresh tries them again. Thrown once the refresh is done.
 */
export class RefreshIncompleteError extends Error {
  override name = "RefreshIncompleteError";
  constructor(
    readonly report: RefreshReport,
    readonly unfolded: UnfoldedProduct[],
  ) {
    super(unfoldedMessage(unfolded));
  }
}

/** What the log, /readyz and the refresh's record say of products a refresh could not fold. */
function unfoldedMessage(unfolded: readonly UnfoldedProduct[]): string {
  const first = unfolded[0]!;
  return (
    `the refresh could not fold ${unfolded.length} product(s)' notes; the first, product ${first.product_id} ` +
    `(${first.notes} notes of ${first.months.join(", ")}, ${first.rows} daily rows): ${first.error}. ` +
    "They wait, reads add them up (exact), and the next refresh tries them again; the rest is folded"
  );
}

/**
 * A failure of one step's statements that another step may not meet: PostgreSQL refused what
 * this step's data made it do (not the database going away, not a stop, not a step met).
 */
function failureOfTheStep(err: unknown): boolean {
  return err instanceof postgres.PostgresError && !databaseProblem(err) && !isDatabaseUnavailable(err) && !metAnotherStep(err);
}

/**
 * One refresh's sessions and signal: every statement goes through `run`, which cancels it in
 * PostgreSQL when the signal fires (the server stops working on it at once, and its
 * transaction rolls back).
 */
class Runner {
  constructor(private readonly signal: AbortSignal | undefined) {}

  throwIfStopped(): void {
    if (this.signal?.aborted) {
      throw new RefreshStopped(
        `refresh stopped (${String(this.signal.reason ?? "aborted")}): the step in progress was rolled back; the steps before it are kept and the next refresh does the rest`,
      );
    }
  }

  async run<T = unknown[]>(session: Session, text: string, params: unknown[] = []): Promise<T> {
    this.throwIfStopped();
    const query = session.unsafe(text, params as postgres.ParameterOrJSON<never>[]);
    const cancel = () => void query.cancel();
    this.signal?.addEventListener("abort", cancel, { once: true });
    try {
      return (await query) as unknown as T;
    } catch (err) {
      this.throwIfStopped();
      throw err;
    } finally {
      this.signal?.removeEventListener("abort", cancel);
    }
  }

  /**
   * `work` in a transaction of `mode` on `session`, with the refresh's settings: committed, or
   * rolled back and rethrown. (Transaction control is the one SQL written here.)
   */
  async transaction<T>(session: Session, mode: string, work: () => Promise<T>): Promise<T> {
    // read write: so that it also runs on a session that is read-only by default (the
    // embedded database while it serves).
    await this.run(session, `begin ${mode}read write`);
    try {
      await this.run(session, transactionSettingsSql);
      const result = await work();
      await this.run(session, "commit");
      return result;
    } catch (err) {
      await session.unsafe("rollback").catch(() => {});
      throw err;
    }
  }
}

/** The count a `select count(*)::int as n ...` reads. */
async function count(r: Runner, session: Session, text: string): Promise<number> {
  const [row] = await r.run<{ n: number }[]>(session, text);
  return row?.n ?? 0;
}

/** The refresh's own session settings, whatever the pool's (session_settings.sql). */
async function prepareSession(session: Session): Promise<void> {
  await session.unsafe(sessionSettingsSql);
}

/** Runs each statement `sql` returns (the rows' `statement`), as psql's \gexec would. */
async function runEach(r: Runner, session: Session, sql: string, params: unknown[], each?: (run: () => Promise<unknown>) => Promise<unknown>): Promise<void> {
  const statements = await r.run<{ statement: string }[]>(session, sql, params);
  for (const { statement } of statements) await (each ? each(() => r.run(session, statement)) : r.run(session, statement));
}

/**
 * Leaves `session` as the pool lent it: no transaction open, the refresh's lock released
 * (`unlock`: the refresh's own session), its settings reset. Tried twice: stopping a refresh
 * cancels its statements in PostgreSQL, and a cancel request lands on whatever the session
 * runs when it arrives; one sent as a statement ended spoiled the next (a rollback left the
 * transaction aborted, or the unlock failed: either way the lock stayed with a pooled session
 * and the next refresh found it taken). It spoils one statement at most.
 */
async function endSession(session: Session, unlock: boolean): Promise<void> {
  for (let attempt = 1; attempt <= 2; attempt++) {
    try {
      // (A rollback spoiled before left the transaction aborted: nothing else runs until one works.)
      if (attempt > 1) await session.unsafe("rollback");
      if (unlock) await session.unsafe(unlockSql, [REFRESH_LOCK_ID]);
      await session.unsafe(sessionResetSql);
      return;
    } catch {
      // again, once; a session that is gone is closed by the pool
    }
  }
}

/**
 * `work` for each item in turn, on SESSIONS_AT_ONCE sessions at once: the refresh's own and
 * helpers reserved from the pool (with the refresh's settings), while `more()` says so. After
 * a failure no session takes another item; the failure is thrown once every session is done
 * (none is released while it still works).
 */
async function onSessions<T>(sql: Sql, session: Session, items: T[], work: (on: Session, item: T) => Promise<void>, more: () => boolean = () => true): Promise<void> {
  const helpers = await Promise.all(
    Array.from({ length: Math.max(0, Math.min(SESSIONS_AT_ONCE - 1, sql.options.max - 1, items.length - 1)) }, () => sql.reserve()),
  );
  let next = 0;
  let failed = false;
  const worker = async (on: Session) => {
    if (on !== session) await prepareSession(on);
    try {
      while (!failed && next < items.length && more()) {
        await work(on, items[next++]!).catch((err) => {
          failed = true;
          throw err;
        });
      }
    } finally {
      if (on !== session) await endSession(on, false);
    }
  };
  try {
    const failure = (await Promise.allSettled([session, ...helpers].map(worker))).find((x) => x.status === "rejected");
    if (failure) throw failure.reason;
  } finally {
    helpers.forEach((h) => h.release());
  }
}

/**
 * Whether a step failed for meeting a step beside it (a rebuild's, which fold side by side):
 * two that fold notes of the same day (writers' notes since the rebuild began) meet on that
 * day's count (count_folded.sql), and the later one's repeatable read transaction fails with a
 * serialization failure (or a deadlock), having changed nothing.
 */
function metAnotherStep(err: unknown): boolean {
  return err instanceof postgres.PostgresError && (err.code === "40001" || err.code === "40P01");
}

/**
 * The statistics of the months' keys, the only columns any plan filters or joins on: a sample
 * of 3,000 rows (25 ms at 50,000 products, against 1.6 s for every column at the default
 * size). At that size the month is not one list of every month's share, but about the same
 * share for each: a month added later is not taken for an empty one even before the next
 * analyze (docs/performance.md).
 */
async function analyzeMonthKeys(r: Runner, session: Session, added?: { after: string; last: string }): Promise<void> {
  await r.run(session, statisticsTargetSql);
  // The partitions of the months a step added, or the parent (analyze_months.sql).
  await runEach(r, session, analyzeMonthsSql, [added?.after ?? null, added?.last ?? null]);
}

/**
 * The months of a step, one after another from its first changed month through `last`: the
 * totals move forward month by month. `dense`: the step's products are many among the ids
 * they span, so each month's rows of those ids are read in key order and hashed; else each
 * product's are looked up by key (either is one pass, whatever the statistics say).
 */
async function foldMonths(r: Runner, session: Session, batch: StepProducts, window: { first: string; last: string }, startsAfter?: string, force?: boolean): Promise<void> {
  const last = window.last;
  const [{ first } = { first: null }] = await r.run<{ first: string | null }[]>(session, stepFirstMonthSql);
  const [{ dense: measured, per_day } = { dense: false, per_day: 0 }] = await r.run<{ dense: boolean; per_day: number }[]>(
    session,
    stepDensitySql,
    [batch.first_product, batch.last_product, window.first, window.last],
  );
  const dense = force ?? measured;
  const ids = [batch.first_product, batch.last_product];
  for (let month = first; month !== null && month <= last; month = nextMonth(month)) {
    const [named] = await r.run<{ pairs: number; first_day: string | null; days: number | null }[]>(
      session,
      monthPairsSql,
      [month, nextMonth(month)],
    );
    // By date: the days from the earliest named day to the month's end, every product's rows;
    // by key: about one index descent (worth ten rows read) and the pair's own rows per pair.
    const byDate = named!.pairs > 0 && (named!.days ?? 0) * per_day < named!.pairs * 10;
    // A month the rollup did not have: its products start from the totals through the month before.
    if (startsAfter !== undefined && month > startsAfter) {
      const previous = new Date(Date.UTC(Number(month.slice(0, 4)), Number(month.slice(5, 7)) - 2, 1)).toISOString().slice(0, 10);
      await r.run(session, startMonthSql, [month, previous, dense, ...ids]);
    }
    await r.run(session, monthRowsSql, [month, nextMonth(month), byDate, named!.first_day ?? month, dense, ...ids]);
    await r.run(session, updateMonthsSql, [month, dense, ...ids]);
    await r.run(session, deleteMonthsSql, [month]);
    await r.run(session, insertMonthsSql, [month]);
    await r.run(session, carryMonthSql);
  }
}

/**
 * One fold step: the notes of products `batch` (all their months, for a rebuild) moved into the
 * months, in one commit. The step given `extendFrom` (the first, when the data reached a later
 * month) also moves the rollup's last month: the products it does not write get rows that
 * carry their totals into the new months, the ones it writes are written from there on, and
 * the months' statistics are made again before it commits.
 */
async function foldBatch(
  r: Runner,
  session: Session,
  batch: StepProducts,
  plan: { rebuild: boolean; window: MonthsWindow; widens?: boolean; extendFrom?: string; dense?: boolean },
): Promise<number> {
  const { first, last } = plan.window;
  return r.transaction(session, "isolation level repeatable read, ", async () => {
    await r.run(session, stepNotesSql, [batch.first_product, batch.last_product, false, false]);
    // The step that widens the window records it, in the commit that gives its months rows.
    if (plan.widens) await r.run(session, recordWindowSql, [first, last, plan.window.outsideBefore, plan.window.outsideAfter]);
    await r.run(session, coverMonthsSql, [last]);
    if (plan.rebuild) {
      // The months were emptied: each product's straight from its daily rows, in one pass.
      await r.run(session, buildMonthsSql, [batch.first_product, batch.last_product, last, first]);
    } else {
      await r.run(session, collectChangesSql, [first, last]);
      await r.run(session, prepareWritesSql);
      if (plan.extendFrom) {
        await r.run(session, extendMonthsSql, [plan.extendFrom, last]);
        await r.run(session, extendFirstMonthSql, [nextMonth(plan.extendFrom)]);
      }
      await foldMonths(r, session, batch, plan.window, plan.extendFrom, plan.dense);
      // A new month's rows, known to the planner in the commit that makes them readable.
      if (plan.extendFrom) await analyzeMonthKeys(r, session, { after: plan.extendFrom, last });
    }
    await r.run(session, clearAnswersSql, [false, first, last]);
    await r.run(session, outsideNotesSql, [first, last]);
    // The answers' versions (ETags) keep what the forgotten notes counted: a fold changes none.
    await r.run(session, countFoldedSql);
    const notes = await count(r, session, countStepNotesSql);
    await r.run(session, forgetChangesSql);
    return notes;
  });
}

/**
 * A rebuild whose window ends earlier than the months did (a far date deleted, or outside the
 * new window) drops the partitions after it: each on its own, waiting at most a second for the
 * reads on the months (a partition's drop locks the table); one it cannot drop now stays, empty,
 * for the next rebuild.
 */
async function dropPartitionsAfter(r: Runner, session: Session, last: string | null): Promise<void> {
  await runEach(r, session, dropPartitionsAfterSql, [last], (drop) =>
    r
      .transaction(session, "", async () => {
        await r.run(session, lockTimeoutSql);
        await drop();
      })
      .catch((err) => {
        if (err instanceof RefreshStopped) throw err;
      }),
  );
}

/** What state.sql reads, as the plan takes it. */
async function readState(r: Runner, session: Session): Promise<RefreshState> {
  const [s] = await r.run<StateRow[]>(session, stateSql);
  return {
    everything: s!.everything,
    notes: s!.notes,
    window: s!.window_first && s!.window_last ? { first: s!.window_first, last: s!.window_last, outsideBefore: s!.outside_before, outsideAfter: s!.outside_after } : null,
    monthsLastMonth: s!.months_last_month,
    notesFirstMonth: s!.notes_first_month,
    notesLastMonth: s!.notes_last_month,
    firstProduct: s!.first_product,
    lastProduct: s!.last_product,
    namedOutside: s!.named_outside,
  };
}

/**
 * A rebuild's first commit: a note of everything (reads add up the daily rows until the last
 * step deletes it), the window found again from the data, the months emptied and every answer
 * dropped, and every month's partition made, so that the steps (side by side) only write rows.
 * Then the partitions after the window dropped, and the old rows vacuumed. Returns the notes of
 * everything it starts from, and the window.
 *
 * One snapshot for the whole transaction (REPEATABLE READ): the window and its nearest months
 * outside are found from the same rows whose notes outside it are then forgotten. At READ
 * COMMITTED each statement saw the data anew, so a row of the next month committed between the
 * two had its note forgotten while neither the window nor its nearest month outside knew of it;
 * the next refresh then widened the window over that month without rebuilding, and the row was
 * read neither from the months nor as a day outside the window (tests/db/rebuild-window-race.test.ts).
 */
async function prepareRebuild(r: Runner, session: Session): Promise<{ everythingNotes: number; window: MonthsWindow | null }> {
  const prepared = await r.transaction(session, "isolation level repeatable read, ", async () => {
    const n = await count(r, session, countEverythingNotesSql);
    // The rebuild's own note (no write changed the data): marked, so that the answers'
    // versions do not count it (migration 0013).
    if (n === 0) await r.run(session, noteRebuildSql);
    const [found] = await r.run<{ first_month: string | null; last_month: string | null; outside_before: string | null; outside_after: string | null }[]>(
      session,
      windowSql,
      [WINDOW_GAP_MONTHS],
    );
    const window = found?.first_month && found.last_month ? { first: found.first_month, last: found.last_month, outsideBefore: found.outside_before, outsideAfter: found.outside_after } : null;
    await r.run(session, recordWindowSql, [window?.first ?? null, window?.last ?? null, window?.outsideBefore ?? null, window?.outsideAfter ?? null]);
    await r.run(session, notesOutsideSql, [window?.first ?? null, window?.last ?? null]);
    await r.run(session, countFoldedSql);
    await r.run(session, forgetChangesSql);
    await r.run(session, emptyRollupMonthsSql);
    await r.run(session, emptyRollupAnswersSql);
    if (window) await r.run(session, coverMonthsSql, [window.last]);
    return { everythingNotes: Math.max(n, 1), window };
  });
  await dropPartitionsAfter(r, session, prepared.window?.last ?? null);
  // The old rows are dead once no read still sees them: vacuumed now, the steps write the
  // months into their pages rather than beside them. (Otherwise a rebuild doubles the
  // months' files: vacuum later makes the old pages reusable but never gives them back.) A
  // read still running keeps its rows, and the steps write beside those.
  await r.run(session, vacuumRebuiltSql);
  return prepared;
}

/** Steps 1 to 3: the plan (refresh-plan.ts) of what to fold, run step by step, and the finish. */
async function fold(r: Runner, sql: Sql, session: Session, options: RefreshOptions, started: number, stepMs: RefreshReport["step_ms"]) {
  const plan = planFold(await readState(r, session), { rebuild: options.rebuild, stepRows: options.stepRows ?? STEP_ROWS });
  const record = (notes: number) => r.run(session, recordRefreshSql, [notes, Math.round(performance.now() - started)]);
  if (plan.mode === "none") {
    await r.transaction(session, "", () => record(0));
    return { mode: "none" as const, notes: 0, steps: 0, unfolded: [] };
  }
  const timed = async <T>(step: RefreshStep, work: () => Promise<T>): Promise<T> => {
    const t = performance.now();
    try {
      return await work();
    } finally {
      stepMs[step] = (stepMs[step] ?? 0) + Math.round(performance.now() - t);
    }
  };
  const rebuild = plan.mode === "rebuild";
  const prepared = rebuild ? await timed("prepare", () => prepareRebuild(r, session)) : undefined;
  const window = prepared ? prepared.window : plan.mode === "changes" ? plan.window : null;

  let notes = 0;
  let steps = 0;
  const unfolded: UnfoldedProduct[] = [];
  if (window) {
    const changes = plan.mode === "changes" ? plan : undefined;
    const batches = changes?.oneStep ? [changes.oneStep] : await r.run<StepProducts[]>(session, batchesSql, [rebuild, window.last, options.stepRows ?? STEP_ROWS, window.first]);
    const step = async (on: Session, batch: StepProducts, firstStep = false) => {
      notes += await foldBatch(r, on, batch, {
        rebuild,
        window,
        ...(firstStep && changes ? { extendFrom: changes.extendFrom, widens: changes.widens } : {}),
        dense: options.dense,
      });
      steps++;
      options.onProgress?.({ step: "totals", done: steps, total: batches.length });
    };
    await timed("fold", async () => {
      if (rebuild) {
        // The products' months straight from their daily rows: steps of disjoint products, each
        // a read of its daily rows and a sort that use one core of the server, side by side.
        // A step that met another runs again after them, alone.
        const again: StepProducts[] = [];
        await onSessions(sql, session, batches, (on, batch) =>
          step(on, batch).catch((err) => {
            if (!metAnotherStep(err)) throw err;
            again.push(batch);
          }),
        );
        for (const batch of again) await step(session, batch);
      } else {
        // One after another: the first to commit moves the rollup's last month for every product
        // and records a widened window. A step that fails is narrowed down, half by half, to the
        // products that fail alone: the others are folded, those are recorded and reported.
        const attempt = async (batch: StepProducts): Promise<void> => {
          try {
            await step(session, batch, steps === 0);
          } catch (err) {
            if (!failureOfTheStep(err)) throw err;
            const named = await r.run<{ id: string }[]>(session, stepProductsSql, [batch.first_product, batch.last_product]);
            if (named.length <= 1) return void unfolded.push(await describeUnfolded(r, session, named[0]?.id ?? batch.first_product, err));
            const half = Math.floor(named.length / 2);
            await attempt({ first_product: batch.first_product, last_product: named[half - 1]!.id, products: half });
            await attempt({ first_product: named[half]!.id, last_product: batch.last_product, products: named.length - half });
          }
        };
        for (const batch of batches) await attempt(batch);
        // No step ran (no product named): a widened window is recorded on its own.
        if (changes?.widens && steps === 0) await r.transaction(session, "", () => r.run(session, recordWindowSql, [window.first, window.last, window.outsideBefore, window.outsideAfter]));
      }
    });
  }

  await timed("finish", () =>
    r.transaction(session, "isolation level repeatable read, ", async () => {
      // A rebuild folds the notes of everything it started with, unless another came since
      // (a TRUNCATE while it ran): then they all stay, and the next refresh rebuilds again.
      const n = await count(r, session, countEverythingNotesSql);
      const foldsEverything = rebuild && n === prepared!.everythingNotes;
      await r.run(session, stepNotesSql, [null, null, window === null, foldsEverything]);
      const folded = await count(r, session, countStepNotesSql);
      await r.run(session, clearAnswersSql, [folded > 0, window?.first ?? null, window?.last ?? null]);
      await r.run(session, countFoldedSql);
      await r.run(session, forgetChangesSql);
      notes += folded;
      // Statistics of the new rows before the renders plan their lookups; and of the daily
      // rows a rebuild has just read whole: after a TRUNCATE and reload the table's own say it
      // is empty until something analyzes it (readers weigh a range's daily rows by them). A
      // role that does not own the daily table gets a warning and goes on.
      if (rebuild) {
        await r.run(session, analyzeDailyRowsSql); // first: the keys' analyze lowers the sample size for the rest of the transaction
        await analyzeMonthKeys(r, session);
      }
      // What this refresh could not fold (nothing: the record is cleared), for /metrics and /readyz.
      await r.run(session, recordFailureSql, [unfolded.length ? unfoldedMessage(unfolded) : null]);
      await record(notes);
    }),
  );
  return { mode: plan.mode, notes, steps, unfolded };
}

/** What a product's notes name, for the line that says it could not be folded. */
async function describeUnfolded(r: Runner, session: Session, productId: string, err: unknown): Promise<UnfoldedProduct> {
  const [row] = await r.run<{ months: string[]; notes: number; rows: number }[]>(
    session,
    unfoldedProductSql,
    [productId],
  );
  return { product_id: productId, months: row?.months ?? [], notes: row?.notes ?? 0, rows: row?.rows ?? 0, error: err instanceof Error ? err.message : String(err) };
}

/** Step 4: renders calendar periods of the data that have no answer, a few sessions at once, latest first, within the budget. */
async function renderMissing(r: Runner, sql: Sql, session: Session, options: RefreshOptions): Promise<{ rendered: number; waiting: number }> {
  const started = performance.now();
  const missing = await r.run<{ period: string; period_start: string }[]>(session, missingAnswersSql);
  if (missing.length === 0) return { rendered: 0, waiting: 0 };
  let done = 0;
  const inBudget = () => options.renderBudgetMs === undefined || performance.now() - started < options.renderBudgetMs;
  await onSessions(sql, session, missing, async (on, { period, period_start }) => {
    await r.transaction(on, "", async () => {
      await r.run(on, deleteAnswerSql, [period, period_start]);
      await r.run(on, renderAnswerSql, [period, period_start]);
    });
    done++;
    options.onProgress?.({ step: "answers", done, total: missing.length });
  }, inBudget);
  await r.transaction(session, "", () => r.run(session, analyzeAnswersSql));
  return { rendered: done, waiting: missing.length - done };
}

/** Refreshes; null when another refresh is running and `wait` is false. */
export async function refreshRollup(sql: Sql, options: RefreshOptions = {}): Promise<RefreshReport | null> {
  const started = performance.now();
  const r = new Runner(options.signal);
  r.throwIfStopped();
  // No run-time path for a schema older than this build's (the months' partitions, the window
  // of months): `migrate` brings it here and then refreshes. Meanwhile reads are exact from the
  // daily rows (read-source.ts). Asked before a session is reserved: it takes one of its own.
  const toApply = await migrationsToApply(sql);
  if (toApply !== undefined) {
    throw new DatabaseProblemError(problem("MIGRATIONS_PENDING", `the database is not at this build's schema: \`migrate\` would apply ${toApply}, and then refresh; nothing was refreshed`));
  }
  const session = await sql.reserve();
  let locked = false; // the session holds the refresh's lock: released when it is given back
  try {
    await prepareSession(session);
    if (options.wait === false) {
      const [row] = await r.run<{ locked: boolean }[]>(session, tryLockSql, [REFRESH_LOCK_ID]);
      if (!row?.locked) return null;
    } else {
      await r.run(session, lockSql, [REFRESH_LOCK_ID]);
    }
    locked = true;
    // The lock first, then the steps: a refresh never works from a state older than what
    // the refresh before it committed.
    await r.transaction(session, "", () => r.run(session, recordStartSql));
    const stepMs: RefreshReport["step_ms"] = {};
    const folded = await fold(r, sql, session, options, started, stepMs);
    const idle = folded.mode === "none";
    const upkeep = !options.upkeepWhenIdle || idle;
    let t = performance.now();
    const answers = upkeep ? await renderMissing(r, sql, session, options) : { rendered: 0, waiting: (await r.run<unknown[]>(session, missingAnswersSql)).length };
    if (answers.rendered > 0) stepMs.answers = Math.round(performance.now() - t);
    // Every fold leaves dead rows behind (the notes it forgot, the totals and answers it
    // replaced). The log's are reclaimed at once, so that the log every read scans stays a few
    // pages and writers' notes reuse its space, also where autovacuum is off or behind; the
    // months' and answers' with the other upkeep.
    t = performance.now();
    const [vacuum] = await r.run<{ statement: string }[]>(session, vacuumSql, [!idle, upkeep, idle]);
    if (vacuum) {
      await r.run(session, vacuum.statement);
      stepMs.vacuum = Math.round(performance.now() - t);
    }
    const { unfolded, ...foldReport } = folded;
    const report: RefreshReport = { ...foldReport, answers: answers.rendered, answers_waiting: answers.waiting, ms: Math.round(performance.now() - started), step_ms: stepMs };
    if (unfolded.length) throw new RefreshIncompleteError(report, unfolded);
    return report;
  } finally {
    await endSession(session, locked);
    session.release();
  }
}

/**
 * Why a refresh could not run, and what fixes it: a database problem as for reads, except
 * that a role that may only read (permission denied, a read-only session: the serving
 * role's URL) needs the owner's URL, not a GRANT. Undefined for a failure of this run alone.
 */
export function refreshProblem(err: unknown): DatabaseProblem | undefined {
  const readOnly = err instanceof postgres.PostgresError && (err.code === "25006" || err.code === "42501");
  const found = databaseProblem(err);
  if (!readOnly) return found;
  return {
    ...(found ?? { code: "PERMISSION_DENIED", summary: (err as Error).message, connecting: false }),
    cause: (err as Error).message,
    fix: "the refresh writes the rollup tables: give it a URL of the tables' owner (the one `migrate` uses), not the serving role's",
  } as DatabaseProblem;
}
