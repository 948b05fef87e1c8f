// Rollup v3 (migration 0006) against the plain GROUP BY. Random products and daily rows,
// then random interleavings of writes (tests/support/random-writes.ts: inserts, upserts,
// updates of amounts, dates and product ids, deletes, COPY, TRUNCATE and reload, rolled-back
// transactions, NaN amounts, writes and product changes at every isolation level, a product
// deleted with its rows), refreshes and reads of ranges of every shape (tests/support/
// random-writes.ts randomRange). Every answer the service gives, end to end through the app
// (the rollup with the notes waiting, the daily rows of a short range, or an exact period's
// rendered answer), must be byte for byte the naive GROUP BY's rows rendered; after every
// refresh the months must be what the daily rows say, and every rendered answer its
// period's naive rows. The refresh's steps vary (one product a step, a few, all at once;
// month rows found by key or in key order), so reads also fall between the steps of one refresh.
//
// On PostgreSQL, writers also really overlap (an advisory-lock barrier opens them together)
// with a refresher and a reader, and each read is compared with the GROUP BY at the read's
// own snapshot (both in one REPEATABLE READ transaction). On the embedded database, one
// session, the same operations run one after another, and its tests say so.
//
// Seeded: the seed is printed; replay a failure with SEED=<seed>.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPool } from "../../src/database/client.ts";
import { productCostsStatement, renderedAnswerStatement } from "../../src/reads/product-costs.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { testDatabase } from "../support/database.ts";
import { advisoryBarrier } from "../support/faults.ts";
import {
  bulkLoad,
  loadProducts,
  prng,
  randomRange,
  randomRows,
  randomWrite,
  SEGMENTS,
  type Rng,
  type Sql,
} from "../support/random-writes.ts";
import { answerDrift, monthsDrift, naiveAnswer, rowsAsJson } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

const SEED = testSeed("rollup property test");
// The refresh's steps (src/rollup/refresh.ts): one product a step, a few, or everything in one.
const STEP_ROWS = [1, 20, 100, 1_000_000] as const;
// How a step finds month rows: by its density (as in production), in key order, by key.
const DENSE = [undefined, true, false] as const;

describeBackends("rollup v3 on $name", (backend) => {
  const viaCopy = backend.name !== "embedded";
  let db: BackendHandle;
  let app: TestApp;
  const stepSizes = prng(SEED ^ 0x5e5e);
  const refresh = () => refreshRollup(db.admin, { stepRows: stepSizes.pick(STEP_ROWS), dense: stepSizes.pick(DENSE) });
  beforeAll(async () => {
    db = await backend.open();
    // With the answer cache: every answer below is also a cached one's or a revalidation's.
    app = testApp(db.service, { answerCache: createAnswerCache(32 * 2 ** 20), build: { version: "property", commit: "test" } });
  });
  afterAll(async () => {
    await db.close();
  });

  async function reset(r: Rng): Promise<void> {
    await db.admin`truncate product_daily_costs, products`;
    await loadProducts(db.admin, r);
    await bulkLoad(db.admin, randomRows(r, 1200), viaCopy);
  }

  let renderedReads = 0;
  let notModified = 0;
  // Per URL, the last ETag served and the bytes served with it: a conditional GET with it
  // answered 304 says those bytes are still the answer, so they must be the GROUP BY's now.
  const served = new Map<string, { etag: string; body: string }>();

  /** One question through the app (first as a revalidation of what it last answered), against the naive answer. */
  async function expectExactAnswer(from: string, to: string, segment: (typeof SEGMENTS)[number], context: string): Promise<void> {
    const rendered = renderedAnswerStatement({ monthFrom: from, monthTo: to, segment });
    if (rendered && (await db.service.unsafe(rendered.text, rendered.params)).length > 0) renderedReads++;
    const path = `/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`;
    const headers = { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" };
    const expected = { status: 200, body: await naiveAnswer(db.service, from, to, segment) };
    const before = served.get(path);
    if (before) {
      const conditional = await app.get(path, { ...headers, "if-none-match": before.etag });
      await conditional.arrayBuffer();
      if (conditional.status === 304) {
        notModified++;
        expect({ seed: SEED, context, from, to, segment, revalidated: before.body }).toEqual({ seed: SEED, context, from, to, segment, revalidated: expected.body });
      }
    }
    const res = await app.get(path, headers);
    const answer = { status: res.status, body: await res.text() };
    expect({ seed: SEED, context, from, to, segment, ...answer }).toEqual({ seed: SEED, context, from, to, segment, ...expected });
    served.set(path, { etag: res.headers.get("etag")!, body: answer.body });
  }

  /** Random ranges and segments through the app, now and then a question asked before. */
  async function expectExactAnswers(r: Rng, context: string, count = 6): Promise<void> {
    for (let i = 0; i < count; i++) {
      const again = served.size > 0 && r.chance(0.3) ? new URL(`http://x${r.pick([...served.keys()])}`).searchParams : undefined;
      const [from, to] = again ? [again.get("month_from")!, again.get("month_to")!] : randomRange(r);
      const segment = again ? (again.get("segment") as (typeof SEGMENTS)[number]) : r.pick(SEGMENTS);
      await expectExactAnswer(from, to, segment, context);
    }
  }

  async function refreshAndCheck(context: string): Promise<void> {
    await refresh();
    const [log] = await db.admin<{ n: number }[]>`select count(*)::int as n from product_cost_deltas`;
    expect({ seed: SEED, context, log: log!.n }).toEqual({ seed: SEED, context, log: 0 });
    expect({ seed: SEED, context, drift: await monthsDrift(db.service) }).toEqual({ seed: SEED, context, drift: [] });
    expect({ seed: SEED, context, answers: await answerDrift(db.service) }).toEqual({ seed: SEED, context, answers: [] });
  }

  test("random writes, refreshes and reads interleaved (one after another): every answer exact, every refresh exact", async () => {
    const r = prng(SEED);
    await reset(r);
    await expectExactAnswers(r, "loaded, not refreshed");
    await refreshAndCheck("first refresh");
    await expectExactAnswers(r, "refreshed");
    for (let round = 1; round <= 50; round++) {
      const step = r.int(0, 9);
      if (step < 6) {
        const what = await randomWrite(db.admin, r, viaCopy);
        await expectExactAnswers(r, `round ${round}: after ${what}`, 3);
      } else if (step < 8) {
        await refreshAndCheck(`round ${round}: refresh`);
      } else {
        await expectExactAnswers(r, `round ${round}: reads`);
      }
    }
    await refreshAndCheck("last refresh");
    await expectExactAnswers(r, "at the end", 12);
    // A calendar month the last refresh rendered, asked twice (the second, first a revalidation).
    for (let k = 0; k < 2; k++) await expectExactAnswer("2024-02-01", "2024-02-29", "all", "a rendered month");
    // Not vacuous: some exact periods were answered from their rendered answer, and some
    // revalidations answered 304.
    expect(renderedReads).toBeGreaterThan(0);
    expect(notModified).toBeGreaterThan(0);
  }, 120_000);

  test("fixed edge ranges before and after a refresh: month ends, leap day, year end, ranges without data", async () => {
    const r = prng(SEED ^ 0x5eed);
    await reset(r);
    const ranges: [string, string][] = [
      ["2024-02-29", "2024-02-29"], ["2024-02-01", "2024-02-29"], ["2024-02-01", "2024-02-28"], ["2024-02-29", "2024-03-01"],
      ["2023-12-31", "2024-01-01"], ["2023-12-01", "2024-01-31"], ["2023-12-02", "2024-01-30"], ["2023-11-30", "2024-03-01"],
      ["2023-11-20", "2024-05-17"], ["2023-01-01", "2025-12-31"], ["2024-06-01", "2024-06-30"], ["2023-01-01", "2023-01-31"],
      ["0001-01-01", "9999-12-31"], ["2024-01-31", "2024-01-31"], ["2024-04-30", "2024-05-01"], ["2024-03-01", "2024-03-31"],
      ["2024-01-01", "2024-03-31"], ["2024-01-01", "2024-12-31"], ["2023-01-01", "2023-12-31"], ["2023-10-01", "2023-12-31"],
      ["2024-01-01", "2024-03-30"], ["2024-01-02", "2024-03-31"], ["2024-01-01", "2024-04-01"], ["2023-12-31", "2024-12-31"],
      ["2023-11-01", "2024-04-30"], ["2023-12-01", "2024-02-29"], ["2024-04-01", "2024-06-30"], ["2023-07-01", "2024-06-30"],
    ];
    for (const refreshed of [false, true]) {
      if (refreshed) await refreshAndCheck("refresh");
      for (const [from, to] of ranges) {
        for (const segment of SEGMENTS) {
          const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`);
          expect({ refreshed, from, to, segment, body: await res.text() }).toEqual({
            refreshed, from, to, segment, body: await naiveAnswer(db.service, from, to, segment),
          });
        }
      }
    }
  });

  // One session (the embedded database) cannot have writes in flight beside each other.
  if (backend.name === "embedded") return;

  test("writers made to overlap (an advisory-lock barrier), a refresher and a reader: each read equals the GROUP BY at its own snapshot", async () => {
    const r = prng(SEED ^ 0xc0c0);
    await reset(r);
    await refresh();
    const url = (await testDatabase()).url;
    const writers = createPool({ url, max: 8, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: false, applicationName: `pce-prop-writers-${process.pid}` });
    const barrier = await advisoryBarrier(url, 74_000_002);
    let writing = true;
    const failures: string[] = [];
    let refreshes = 0;
    let reads = 0;
    // Six writers, each its own seeded sequence of random writes, on the same 30 products.
    const writerLoops = Array.from({ length: 6 }, async (_, w) => {
      const wr = prng(SEED ^ (0x1000 + w));
      await writers`select pg_advisory_lock_shared(${barrier.id}), pg_advisory_unlock_shared(${barrier.id})`;
      // Twelve writes each at least, and on until the refresher and the reader have overlapped
      // them (two refreshes, six reads): on a loaded machine one refresh outlasted 72 writes.
      for (let i = 0; i < 12 || ((refreshes < 2 || reads < 6) && i < 400); i++) {
        try {
          // Bulk loads by multi-row INSERT here: postgres.js's COPY stream was seen to hang
          // with several COPYs in flight on one pool (the sequential test above uses COPY).
          await randomWrite(writers, wr, false);
        } catch (err) {
          // What PostgreSQL itself refuses to concurrent writers (serialization failures,
          // deadlocks, duplicate keys, a product deleted under another writer's daily rows:
          // their own conflicts, never the project's) is the ETL's to retry; anything else fails.
          const code = (err as { code?: string }).code;
          if (!["40001", "40P01", "23505", "23503"].includes(code ?? "")) failures.push(`writer ${w}: ${String(err)}`);
        }
      }
    });
    const refresher = (async () => {
      while (writing) {
        await refresh();
        refreshes++;
      }
    })();
    const reader = (async () => {
      const reads_ = prng(SEED ^ 0xfeed);
      while (writing) {
        const [from, to] = randomRange(reads_);
        const segment = reads_.pick(SEGMENTS);
        // Both in one transaction: the service's statements and the GROUP BY see one snapshot.
        // The tables are locked before it is taken: TRUNCATE is not MVCC-safe, and a snapshot
        // older than a TRUNCATE's commit would see the table empty. (A single statement, as
        // the service runs, holds its locks before its snapshot too.)
        await db.service.begin("isolation level repeatable read", async (tx) => {
          await tx`lock table product_daily_costs, products, product_cost_months, product_cost_answers, product_cost_deltas in access share mode`;
          const rendered = renderedAnswerStatement({ monthFrom: from, monthTo: to, segment });
          const chunks = rendered ? [...(await tx.unsafe<{ body: string }[]>(rendered.text, rendered.params))] : [];
          let answer: string;
          if (chunks.length > 0) {
            answer = "[" + chunks.map((c) => c.body).join("") + "]";
          } else {
            const general = productCostsStatement({ monthFrom: from, monthTo: to, segment });
            answer = rowsAsJson(await tx.unsafe(general.text, general.params).raw());
          }
          const expected = await naiveAnswer(tx as unknown as Sql, from, to, segment);
          if (answer !== expected) failures.push(`read ${from}..${to} ${segment}: ${answer.slice(0, 200)} != ${expected.slice(0, 200)}`);
        });
        reads++;
      }
    })();
    await barrier.waiting(6);
    await barrier.release();
    await Promise.all(writerLoops);
    writing = false;
    await Promise.all([refresher, reader]);
    await writers.end({ timeout: 5 });
    expect({ seed: SEED, failures: failures.slice(0, 5) }).toEqual({ seed: SEED, failures: [] });
    console.log(JSON.stringify({ overlapping: { reads, refreshes } }));
    expect(reads).toBeGreaterThan(5);
    expect(refreshes).toBeGreaterThan(1);
    await refreshAndCheck("after the overlapping writers");
    await expectExactAnswers(r, "after the overlapping writers", 12);
  }, 120_000);
});
