// Sessions interleaved step by step, as PostgreSQL's isolation tester does: a refresh held
// before each of its commits, a read held at a chosen point of its own, and a look at
// pg_locks to know that a session waits where it was meant to. Real sessions on a real server;
// the holds are the test's (a promise before a statement is sent, a lock the test takes).

import { answerVersionStatement } from "../../src/reads/product-costs.ts";
import { rangeFactsStatement } from "../../src/reads/edges/range-read.ts";
import type { Sql } from "../../src/database/client.ts";
import { waitUntil } from "./faults.ts";

type Run = Pick<Sql, "unsafe" | "reserve">;

/** A commit the refresh is about to send, held until `proceed()`; `done` settles once it has committed. */
export interface HeldCommit {
  /** 1 for the refresh's first commit, and so on (commits of its helper sessions included). */
  index: number;
  proceed(): void;
  done: Promise<unknown>;
}

/**
 * `sql` on which every `commit` (of the sessions it reserves) waits for `hold` to proceed it. The
 * refresh awaits its statements and only cancels them otherwise (src/rollup/refresh.ts: Runner), so
 * a commit stands in as a thenable that sends the real one once proceeded.
 */
export function heldCommits(sql: Sql, hold: (commit: HeldCommit) => void): Sql {
  let count = 0;
  const wrap = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, property, receiver) {
        const run = t as unknown as Run;
        if (property === "reserve") return async () => wrap(await run.reserve());
        if (property !== "unsafe") return Reflect.get(t, property, receiver);
        return (text: string, ...rest: never[]) => {
          if (text !== "commit") return run.unsafe(text, ...rest);
          let proceed!: () => void;
          const proceeded = new Promise<void>((resolve) => (proceed = resolve));
          let real: ReturnType<Run["unsafe"]> | undefined;
          const done = proceeded.then(() => (real = run.unsafe("commit")));
          done.catch(() => {});
          hold({ index: ++count, proceed, done });
          return { then: (resolve: never, reject: never) => done.then(resolve, reject), cancel: () => real?.cancel() };
        };
      },
    });
  return wrap(sql);
}

/**
 * `sql` on which, in every session it reserves, the statement `text` is sent only once
 * `before()` has settled (the refresh awaits each statement and may cancel it: a thenable that
 * can be cancelled stands in for it until then).
 */
export function heldBefore(sql: Sql, text: string, before: () => Promise<void>): Sql {
  return new Proxy(sql, {
    get(t, property, receiver) {
      if (property !== "reserve") return Reflect.get(t, property, receiver);
      return async () => {
        const session = await t.reserve();
        return new Proxy(session, {
          get(s, p, r) {
            if (p !== "unsafe") return Reflect.get(s, p, r);
            return (statement: string, ...rest: never[]) => {
              if (statement !== text) return s.unsafe(statement, ...rest);
              let real: ReturnType<Run["unsafe"]> | undefined;
              const sent = before().then(() => (real = s.unsafe(statement, ...rest)));
              return { then: (resolve: never, reject: never) => sent.then(resolve, reject), cancel: () => real?.cancel() };
            };
          },
        });
      };
    },
  });
}

/**
 * `sql` on which, in every session it reserves for a read's snapshot (src/reads/read.ts), the first
 * statement after the snapshot's begin and head waits on the server for the advisory lock
 * `key`, which the test holds exclusively: sent just before it on the same session, so that
 * statement is planned only once the test lets go, at the snapshot the head took.
 */
export function heldAfterHead(sql: Sql, key: number): Sql {
  // The head is the answer's version, or range_facts.sql where the read may use held edges.
  const heads = new Set([answerVersionStatement("2000-01-01", "2000-01-01").text, rangeFactsStatement({ monthFrom: "2000-01-01", monthTo: "2000-01-02", segment: "all" }).text]);
  return new Proxy(sql, {
    get(t, property, receiver) {
      if (property !== "reserve") return Reflect.get(t, property, receiver);
      return async () => {
        const session = await t.reserve();
        let held = false;
        return new Proxy(session, {
          get(s, p, r) {
            if (p !== "unsafe") return Reflect.get(s, p, r);
            return (text: string, ...rest: never[]) => {
              if (!held && !text.startsWith("begin ") && !heads.has(text)) {
                held = true;
                s.unsafe("select pg_advisory_lock_shared($1), pg_advisory_unlock_shared($1)", [key] as never).execute().catch(() => {});
              }
              return s.unsafe(text, ...rest);
            };
          },
        });
      };
    },
  });
}

/** Waits until `count` sessions of `applicationName` wait for a lock (any lock: where a read meets the refresh's, or the test's). */
export async function waitForLocks(admin: Sql, applicationName: string, count: number, timeoutMs = 15_000): Promise<void> {
  await waitUntil(
    `${count} sessions of ${applicationName} wait for a lock`,
    async () => {
      const [row] = await admin<{ n: number }[]>`
        select count(distinct l.pid)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
        where not l.granted and split_part(a.application_name, ' ', 1) = ${applicationName}`;
      return row!.n >= count;
    },
    timeoutMs,
  );
}

/** Ends every session of `applicationName` (its locks, granted or waited for, with it). */
export async function endSessions(admin: Sql, applicationName: string): Promise<void> {
  await admin`select pg_terminate_backend(pid) from pg_stat_activity where split_part(application_name, ' ', 1) = ${applicationName}`;
  await waitUntil(`the sessions of ${applicationName} are gone`, async () => (await admin`select 1 from pg_stat_activity where split_part(application_name, ' ', 1) = ${applicationName}`).length === 0);
}
