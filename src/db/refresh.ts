// The refresh (migration 0005): folds the change log into the totals to date, then renders
// again the answers of the calendar periods that lack one. Writers never wait for it and
// reads are exact without it; it only keeps reads fast. One refresh at a time (an advisory
// lock held for its whole run): `migrate`, `load-csv` and `refresh` run it; a systemd timer
// runs `refresh` every minute (README).
//
// 1. One REPEATABLE READ transaction: everything it reads (the log, the daily rows) is one
//    snapshot. It updates the totals to date, drops the rendered answers the log makes
//    stale, and forgets exactly the log rows its snapshot saw; readers see the old state
//    until it commits.
// 2. Then each calendar period without an answer is rendered in a transaction of its own,
//    two at a time (PostgreSQL renders on as many cores). An answer rendered from totals
//    that a later write makes stale is never trusted: that write's log row names its period
//    until the next refresh drops the answer. A period left unrendered (the process stopped)
//    is rendered by the next refresh; meanwhile its reads add up the totals, exactly.

import buildMonthsSql from "../../sql/refresh/build_months.sql" with { type: "text" };
import buildTotalsSql from "../../sql/refresh/build_totals.sql" with { type: "text" };
import clearAnswersSql from "../../sql/refresh/clear_answers.sql" with { type: "text" };
import clearTotalsSql from "../../sql/refresh/clear_totals.sql" with { type: "text" };
import collectChangesSql from "../../sql/refresh/collect_changes.sql" with { type: "text" };
import createGridSql from "../../sql/refresh/create_grid.sql" with { type: "text" };
import createMonthsSql from "../../sql/refresh/create_months.sql" with { type: "text" };
import deleteAnswerSql from "../../sql/refresh/delete_answer.sql" with { type: "text" };
import extendTotalsSql from "../../sql/refresh/extend_totals.sql" with { type: "text" };
import forgetChangesSql from "../../sql/refresh/forget_changes.sql" with { type: "text" };
import missingAnswersSql from "../../sql/refresh/missing_answers.sql" with { type: "text" };
import renderAnswerSql from "../../sql/refresh/render_answer.sql" with { type: "text" };
import stateSql from "../../sql/refresh/state.sql" with { type: "text" };
import updateTotalsSql from "../../sql/refresh/update_totals.sql" with { type: "text" };
import type { Sql } from "./client.ts";

/** Any fixed number, another than migrate's: all refreshes take the same lock. */
const REFRESH_LOCK_ID = 74_201_312;
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
  totals_last_month: string | null;
}

type Session = Awaited<ReturnType<Sql["reserve"]>>;

/** The first days of the months from `first` through `last` (YYYY-MM-01 each), and of the month after. */
function monthStarts(first: string, last: string): string[] {
  const index = (date: string) => Number(date.slice(0, 4)) * 12 + Number(date.slice(5, 7)) - 1;
  const out: string[] = [];
  for (let k = index(first); k <= index(last) + 1; k++) {
    out.push(`${String(Math.floor(k / 12)).padStart(4, "0")}-${String((k % 12) + 1).padStart(2, "0")}-01`);
  }
  return out;
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

/** Step 1: the totals to date, the stale answers dropped, the log forgotten; one snapshot. */
async function fold(session: Session, options: RefreshOptions): Promise<{ mode: RefreshReport["mode"]; notes: number }> {
  const [s] = (await session.unsafe(stateSql)) as unknown as State[];
  const rebuild = Boolean(options.rebuild || s!.everything);
  if (!rebuild && s!.notes === 0) return { mode: "none", notes: 0 };
  const progress = options.onProgress ?? (() => {});

  if (rebuild) {
    await session.unsafe(clearTotalsSql);
    if (s!.first_month && s!.last_month) {
      // Month by month in date order (the daily table's own order), then the running sums.
      await session.unsafe(createMonthsSql);
      const starts = monthStarts(s!.first_month, s!.last_month);
      for (let i = 0; i + 1 < starts.length; i++) {
        await session.unsafe(buildMonthsSql, [starts[i]!, starts[i + 1]!]);
        progress({ step: "totals", done: i + 1, total: starts.length });
      }
      await session.unsafe(buildTotalsSql, [s!.last_month]);
      // Statistics of the new rows before the renders plan their lookups.
      await session.unsafe("analyze product_month_costs");
      progress({ step: "totals", done: starts.length, total: starts.length });
    }
  } else {
    // The totals never shrink: they keep every month they had, so a read's lookups stay dense.
    const last = [s!.last_month, s!.totals_last_month].filter((m): m is string => m !== null).sort().at(-1);
    if (last) {
      // What the changes touch, counted before it is planned: a day's writes name one month
      // of many products, whose totals are then updated by key, not by reading them all.
      await session.unsafe(collectChangesSql);
      await session.unsafe("analyze refresh_changed");
      await session.unsafe(createGridSql, [last]);
      await session.unsafe("analyze refresh_grid");
      await session.unsafe(updateTotalsSql);
      if (s!.totals_last_month && last > s!.totals_last_month) await session.unsafe(extendTotalsSql, [s!.totals_last_month, last]);
    }
    progress({ step: "totals", done: 1, total: 1 });
  }
  await session.unsafe(clearAnswersSql, [rebuild || s!.attributes]);
  await session.unsafe(forgetChangesSql);
  return { mode: rebuild ? "rebuild" : "changes", notes: s!.notes };
}

/** Step 2: renders every calendar period of the data that has no answer, a few sessions at once. */
async function renderMissing(sql: Sql, session: Session, options: RefreshOptions): Promise<number> {
  const missing = (await session.unsafe(missingAnswersSql)) as unknown as { period: string; period_start: string }[];
  if (missing.length === 0) return 0;
  const progress = options.onProgress ?? (() => {});
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
      progress({ step: "answers", done: ++done, total: missing.length });
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
      const folded = await inTransaction(session, "isolation level repeatable read, ", () => fold(session, options));
      const answers = await renderMissing(sql, session, options);
      // Every refresh leaves dead rows behind (the notes it forgot, the totals and answers it
      // replaced). Reclaimed now, so that the log that every read scans stays a few pages
      // and writers' notes reuse its space, also where autovacuum is off or behind.
      if (folded.mode !== "none") await session.unsafe("vacuum product_cost_changes, product_month_costs, product_cost_answers");
      return { ...folded, answers, ms: Math.round(performance.now() - started) };
    } finally {
      await session`select pg_advisory_unlock(${REFRESH_LOCK_ID})`.catch(() => {});
    }
  } finally {
    session.release();
  }
}
