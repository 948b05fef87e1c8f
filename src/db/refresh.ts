// The refresh (migration 0006): folds the notes writers left (product_cost_deltas) into the
// months (product_cost_months), then renders the answers of the calendar periods that lack
// one. Writers never wait for it and reads are exact without it; it keeps reads fast and the
// log short. One refresh at a time (an advisory lock held for its whole run): `migrate`,
// `load-csv` and `refresh` run it; a systemd timer runs `refresh` every minute, or the
// service runs it itself when given an owner's URL (README).
//
// 1. One REPEATABLE READ transaction: everything it reads (the log, the daily rows) is one
//    snapshot. It computes again, from the daily rows, the (product, month) pairs the log
//    names (every pair, for a rebuild), moves the totals before each later month of those
//    products, drops the rendered answers the log makes stale, forgets exactly the notes its
//    snapshot saw, and records when it finished; readers see the old state until it commits.
// 2. Then each calendar period without an answer is rendered in a transaction of its own,
//    two at a time (PostgreSQL renders on as many cores). An answer rendered from months
//    that a later write makes stale is never trusted: that write's note names its period
//    until the next refresh drops the answer. A period left unrendered (the process stopped)
//    is rendered by the next refresh; meanwhile its reads add up the months, exactly.

import clearAnswersSql from "../../sql/refresh/clear_answers.sql" with { type: "text" };
import collectChangesSql from "../../sql/refresh/collect_changes.sql" with { type: "text" };
import countFoldedSql from "../../sql/refresh/count_folded.sql" with { type: "text" };
import deleteAnswerSql from "../../sql/refresh/delete_answer.sql" with { type: "text" };
import extendMonthsSql from "../../sql/refresh/extend_months.sql" with { type: "text" };
import forgetChangesSql from "../../sql/refresh/forget_changes.sql" with { type: "text" };
import missingAnswersSql from "../../sql/refresh/missing_answers.sql" with { type: "text" };
import prepareWritesSql from "../../sql/refresh/prepare_writes.sql" with { type: "text" };
import recordRefreshSql from "../../sql/refresh/record_refresh.sql" with { type: "text" };
import renderAnswerSql from "../../sql/refresh/render_answer.sql" with { type: "text" };
import startMonthSql from "../../sql/refresh/start_month.sql" with { type: "text" };
import stateSql from "../../sql/refresh/state.sql" with { type: "text" };
import writeMonthSql from "../../sql/refresh/write_month.sql" with { type: "text" };
import postgres from "postgres";
import type { Sql } from "./client.ts";
import { databaseProblem, type DatabaseProblem } from "./problems.ts";

/** Any fixed number, another than migrate's: all refreshes take the same lock. */
export const REFRESH_LOCK_ID = 74_201_312;
/** Answers rendered at once, each on a session of its own (the pool permitting). */
const RENDER_SESSIONS = 2;

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
  /** Calendar periods whose answers were rendered (each for the three segments). */
  answers: number;
  ms: number;
}

export interface RefreshOptions {
  /** Rebuild everything, whatever the log says. */
  rebuild?: boolean;
  /** Wait for a refresh already running (default); false: return null at once instead. */
  wait?: boolean;
  onProgress?: (progress: RefreshProgress) => void;
}

interface State {
  everything: boolean;
  attributes: boolean;
  notes: number;
  first_month: string | null;
  last_month: string | null;
  months_last_month: string | null;
}

type Session = Awaited<ReturnType<Sql["reserve"]>>;

/** The first day of the month after `month` (YYYY-MM-01). */
function nextMonth(month: string): string {
  const k = Number(month.slice(0, 4)) * 12 + Number(month.slice(5, 7)); // the next month's index, 0-based
  return `${String(Math.floor(k / 12)).padStart(4, "0")}-${String((k % 12) + 1).padStart(2, "0")}-01`;
}

/** Runs `work` in a transaction of `mode` on `session`: committed, or rolled back and rethrown. */
async function inTransaction<T>(session: Session, mode: string, work: () => Promise<T>): Promise<T> {
  // read write: so that it also runs on a session that is read-only by default (the
  // embedded database while it serves). No serving timeout: a rebuild adds up millions of
  // rows, with room to do it in memory.
  await session.unsafe(`begin ${mode}read write`);
  try {
    await session.unsafe("set local statement_timeout = 0");
    await session.unsafe("set local work_mem = '64MB'");
    // As the serving sessions (src/db/client.ts): JIT compiled each of these statements for
    // over a second, and the changed months are looked up by key in cached tables.
    await session.unsafe("set local jit = off");
    await session.unsafe("set local random_page_cost = 1.1");
    const result = await work();
    await session.unsafe("commit");
    return result;
  } catch (err) {
    await session.unsafe("rollback").catch(() => {});
    throw err;
  }
}

/** Step 1: the months brought to the daily rows, stale answers dropped, the log forgotten; one snapshot. */
async function fold(session: Session, options: RefreshOptions, started: number): Promise<{ mode: RefreshReport["mode"]; notes: number }> {
  const [s] = (await session.unsafe(stateSql)) as unknown as State[];
  const rebuild = Boolean(options.rebuild || s!.everything);
  const record = (notes: number) => session.unsafe(recordRefreshSql, [notes, Math.round(performance.now() - started)]);
  if (!rebuild && s!.notes === 0) {
    await record(0);
    return { mode: "none", notes: 0 };
  }
  // The rollup's last month: the data's, and never earlier than before (the months never
  // shrink, so a read's lookups stay dense).
  const last = [s!.last_month, rebuild ? null : s!.months_last_month].filter((m): m is string => m !== null).sort().at(-1);

  if (rebuild) await session.unsafe("delete from product_cost_months"); // DELETE: readers keep the old rows until commit
  if (last) {
    if (!rebuild && s!.months_last_month && last > s!.months_last_month) await session.unsafe(extendMonthsSql, [s!.months_last_month, last]);
    await session.unsafe(collectChangesSql, [rebuild, s!.first_month, last]);
    await session.unsafe(prepareWritesSql);
    // What the changes touch, counted before it is planned: a day's writes name one month of
    // many products, whose daily rows are then read by date; a few changes, by key.
    await session.unsafe("analyze refresh_changed, refresh_products");
    const [{ first } = { first: null }] = (await session.unsafe("select min(first_month)::text as first from refresh_products")) as unknown as { first: string | null }[];
    // Month by month in date order (the daily table's own order), from the first changed
    // month through the last: a change moves the totals before every later month.
    const months: string[] = [];
    for (let m = first; m !== null && m <= last; m = nextMonth(m)) months.push(m);
    for (const [i, month] of months.entries()) {
      // The daily rows read start at the month's earliest changed day (a day's writes: that day).
      const [{ first_day } = { first_day: null }] = (await session.unsafe(
        "select min(month + first_day - 1)::text as first_day from refresh_changed where month = $1::date",
        [month],
      )) as unknown as { first_day: string | null }[];
      await session.unsafe(startMonthSql, [month]);
      await session.unsafe(writeMonthSql, [month, nextMonth(month), first_day ?? nextMonth(month)]);
      options.onProgress?.({ step: "totals", done: i + 1, total: months.length });
    }
    // Statistics of the new rows before the renders plan their lookups.
    if (rebuild) await session.unsafe("analyze product_cost_months");
  }
  await session.unsafe(clearAnswersSql, [rebuild || s!.attributes]);
  // The answers' versions (ETags) keep what the forgotten notes counted: a fold changes none.
  await session.unsafe(countFoldedSql);
  await session.unsafe(forgetChangesSql);
  await record(s!.notes);
  return { mode: rebuild ? "rebuild" : "changes", notes: s!.notes };
}

/** Step 2: renders every calendar period of the data that has no answer, a few sessions at once. */
async function renderMissing(sql: Sql, session: Session, options: RefreshOptions): Promise<number> {
  const missing = (await session.unsafe(missingAnswersSql)) as unknown as { period: string; period_start: string }[];
  if (missing.length === 0) return 0;
  const helpers = await Promise.all(
    Array.from({ length: Math.min(RENDER_SESSIONS - 1, sql.options.max - 1, missing.length - 1) }, () => sql.reserve()),
  );
  let next = 0;
  let done = 0;
  const worker = async (on: Session) => {
    while (next < missing.length) {
      const { period, period_start } = missing[next++]!;
      await inTransaction(on, "", async () => {
        await on.unsafe(deleteAnswerSql, [period, period_start]);
        await on.unsafe(renderAnswerSql, [period, period_start]);
      });
      options.onProgress?.({ step: "answers", done: ++done, total: missing.length });
    }
  };
  try {
    await Promise.all([session, ...helpers].map(worker));
  } finally {
    helpers.forEach((h) => h.release());
  }
  await inTransaction(session, "", () => session.unsafe("analyze product_cost_answers"));
  return missing.length;
}

/** Refreshes; null when another refresh is running and `wait` is false. */
export async function refreshRollup(sql: Sql, options: RefreshOptions = {}): Promise<RefreshReport | null> {
  const started = performance.now();
  const session = await sql.reserve();
  try {
    if (options.wait === false) {
      const [row] = await session<{ locked: boolean }[]>`select pg_try_advisory_lock(${REFRESH_LOCK_ID}) as locked`;
      if (!row?.locked) return null;
    } else {
      await session`select pg_advisory_lock(${REFRESH_LOCK_ID})`;
    }
    try {
      // The lock first, then the snapshot: a refresh never works from a state older than
      // what the refresh before it committed.
      const folded = await inTransaction(session, "isolation level repeatable read, ", () => fold(session, options, started));
      const answers = await renderMissing(sql, session, options);
      // Every refresh leaves dead rows behind (the notes it forgot, the totals and answers it
      // replaced). Reclaimed now, so that the log that every read scans stays a few pages
      // and writers' notes reuse its space, also where autovacuum is off or behind.
      if (folded.mode !== "none") await session.unsafe("vacuum product_cost_deltas, product_cost_months, product_cost_answers");
      return { ...folded, answers, ms: Math.round(performance.now() - started) };
    } finally {
      await session`select pg_advisory_unlock(${REFRESH_LOCK_ID})`.catch(() => {});
    }
  } finally {
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
