// Issue 52, the attack: writers at every isolation level, the refresh in a loop (a rebuild now
// and then) and clients with the answer cache, all at once, and every answer held against the
// GROUP BY at a commit inside its request's window. The writers take turns (an advisory lock),
// so each commit's state is known: right after a commit, before the next writer may commit, the
// GROUP BY of every range is taken. A 200 must equal the state of some commit that was current
// during its request; a 304 must stand for (its ETag's body must be) such a state too.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { namedPool } from "../support/faults.ts";
import { loadDenseFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { prng } from "../support/random-fixture.ts";
import { testSeed } from "../support/seed.ts";
import naiveQuery from "../db/naive_product_costs.sql" with { type: "text" };

const PATH = "/external/v1/product-costs";
const RANGES = [
  "month_from=2026-01-01&month_to=2026-01-31&segment=all",
  "month_from=2026-01-10&month_to=2026-03-01&segment=normal",
  "month_from=2026-02-15&month_to=2026-04-30&segment=all",
  "month_from=2026-03-01&month_to=2026-03-01&segment=all",
  "month_from=2025-12-01&month_to=2026-05-31&segment=sample",
  "month_from=2026-03-20&month_to=2026-04-02&segment=all",
  "month_from=2026-02-10&month_to=2027-12-31&segment=all",
  "month_from=2026-03-15&month_to=2026-09-01&segment=normal",
];
const ISOLATION = ["read committed", "repeatable read", "serializable"];
const WRITER_LOCK = 52_052;

/** Text of the naive rows, to compare with an answer's JSON: each row's values in order. */
const rowsText = (rows: Record<string, unknown>[]) => JSON.stringify(rows.map((r) => Object.values(r)));
/** An answer's JSON as the same text (numbers as written: exact decimals stay their text). */
const answerText = (body: string) => JSON.stringify((JSON.parse(body.replace(/":(-?[0-9][0-9.e+-]*)/g, '":"$1"')) as Record<string, unknown>[]).map((r) => Object.values(r)));

describeWithPostgres("writers, the refresh and readers at once: every answer the GROUP BY of a commit in its window", () => {
  let db: TestDatabase;
  let sql: Sql;
  let app: TestApp;

  beforeAll(async () => {
    db = await testDatabase();
    sql = namedPool(db.url, `pce-attack-${process.pid}`, { max: 6 });
    app = testApp(sql, { answerCache: createAnswerCache(32 * 2 ** 20) });
    await loadDenseFixture(db.admin, { products: 30, from: "2026-01-01", to: "2026-03-31", sampleEvery: 4 });
    await refreshRollup(db.admin, { rebuild: true });
  }, 60_000);

  afterAll(async () => {
    await sql.end({ timeout: 2 });
  });

  test("two writers at every isolation level, the refresh in a loop, four clients: no answer and no 304 outside its window", async () => {
    const random = prng(testSeed("writers, readers, refresh"));
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const groupBy = async () => {
      const states = new Map<string, string>();
      for (const range of RANGES) {
        const q = new URLSearchParams(range);
        states.set(range, rowsText(await db.admin.unsafe(naiveQuery, [q.get("month_from")!, q.get("month_to")!, q.get("segment")!])));
      }
      return states;
    };
    // The states of the data, each from the moment its commit was sent until the next commit returned.
    const history: { from: number; until: number; states: Map<string, string> }[] = [{ from: -Infinity, until: Infinity, states: await groupBy() }];
    const current = (range: string, t0: number, t1: number) => history.filter((h) => h.from <= t1 && h.until >= t0).map((h) => h.states.get(range)!);
    let running = true;
    let writes = 0;
    let nextMonth = new Date(Date.UTC(2026, 3, 1));

    const writer = async () => {
      const session = await db.admin.reserve();
      try {
        while (running) {
          await session`select pg_advisory_lock(${WRITER_LOCK})`;
          try {
            await session.unsafe(`begin isolation level ${pick(ISOLATION)}`);
            const product = 1 + Math.floor(random() * 30);
            const dayOf = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().slice(0, 10);
            const kind = pick(["insert", "update", "delete", "rename", "new month"]);
            if (kind === "insert") await session`insert into product_daily_costs values (${product}, ${dayOf(Math.floor(random() * 120))}::date, 1.25, null, 2, 0.5) on conflict (product_id, cost_date) do update set purchase_cost_usd = product_daily_costs.purchase_cost_usd + 1`;
            else if (kind === "update") await session`update product_daily_costs set inbound_freight_usd = inbound_freight_usd + 0.5 where product_id = ${product} and cost_date = ${dayOf(Math.floor(random() * 90))}::date`;
            else if (kind === "delete") await session`delete from product_daily_costs where product_id = ${product} and cost_date = ${dayOf(Math.floor(random() * 90))}::date`;
            else if (kind === "rename") await session`update products set product_name = ${`Renamed ${writes}`} where product_id = ${product}`;
            else {
              // The first row of the month after the data's last: the refresh extends the months.
              await session`insert into product_daily_costs values (${product}, ${nextMonth.toISOString().slice(0, 10)}::date, 7, 7, 7, 7) on conflict do nothing`;
              nextMonth = new Date(Date.UTC(nextMonth.getUTCFullYear(), nextMonth.getUTCMonth() + 1, 1));
            }
            const sent = performance.now();
            await session.unsafe("commit");
            const states = await groupBy(); // no other writer commits until this one lets go
            history.at(-1)!.until = performance.now();
            history.push({ from: sent, until: Infinity, states });
            writes++;
          } finally {
            await session`select pg_advisory_unlock(${WRITER_LOCK})`;
          }
          await Bun.sleep(random() * 30);
        }
      } finally {
        session.release();
      }
    };

    const refresher = async () => {
      for (let turn = 0; running; turn++) await refreshRollup(db.admin, turn % 7 === 6 ? { rebuild: true } : {});
    };

    const problems: string[] = [];
    const checks: (() => string | undefined)[] = [];
    const bodies = new Map<string, string>(); // ETag -> its body
    const tags = new Map<string, string>(); // range -> the last ETag given for it
    let answers = 0;
    let notModified = 0;
    const client = async () => {
      while (running) {
        const range = pick(RANGES);
        const tag = tags.get(range);
        const conditional = tag && random() < 0.5;
        const t0 = performance.now();
        const res = await app.get(`${PATH}?${range}`, { authorization: `Bearer ${KEY}`, ...(conditional ? { "if-none-match": tag } : {}) });
        const body = await res.text();
        const t1 = performance.now();
        // Checked once everything has stopped: a commit's state is taken only after it returns.
        if (res.status === 304) {
          notModified++;
          const given = bodies.get(tag!)!;
          checks.push(() => (current(range, t0, t1).includes(answerText(given)) ? undefined : `a 304 on ${range} for a body no commit of its window had`));
        } else if (res.status !== 200) problems.push(`${res.status} ${body} on ${range}`);
        else {
          answers++;
          checks.push(() => (current(range, t0, t1).includes(answerText(body)) ? undefined : `a 200 on ${range} that no commit of its window had`));
          const etag = res.headers.get("etag")!;
          if (bodies.has(etag) && bodies.get(etag) !== body) problems.push(`${etag} stands for two bodies`);
          bodies.set(etag, body);
          tags.set(range, etag);
        }
      }
    };

    const work = [writer(), writer(), refresher(), ...Array.from({ length: 4 }, () => client())];
    await Bun.sleep(6_000);
    running = false;
    await Promise.all(work);
    console.log(`writers, readers, refresh: ${writes} commits, ${answers} answers, ${notModified} 304s`);
    for (const check of checks) {
      const problem = check();
      if (problem) problems.push(problem);
    }
    expect(problems.slice(0, 10)).toEqual([]);
    expect({ writes: writes > 20, answers: answers > 100, notModified: notModified > 10 }).toEqual({ writes: true, answers: true, notModified: true });
  }, 60_000);
});
