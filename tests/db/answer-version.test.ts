// The answers' versions (migration 0007, src/reads/answer-version.ts): what an ETag names.
// Exact: whenever a range's version is one it had before, its answers (every segment) are
// the naive GROUP BY's answers of that time, through random interleavings of every kind of
// write the contract tables allow (tests/support/random-writes.ts) and refreshes. Useful:
// a refresh changes no version, a write outside a range leaves the range's version alone,
// two pools read the same version, and a table made again (a restore) changes every version.
//
// Seeded: the seed is printed; replay a failure with SEED=<seed>.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readAnswerVersion as readVersionAndTime } from "../../src/reads/product-costs.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { bulkLoad, loadProducts, prng, randomRange, randomRows, randomWrite, SEGMENTS, type Rng } from "../support/random-writes.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

const SEED = testSeed("answer version test");

const readAnswerVersion = async (sql: Parameters<typeof readVersionAndTime>[0], from: string, to: string) => (await readVersionAndTime(sql, from, to)).version;

describeBackends("answer versions on $name", (backend) => {
  const viaCopy = backend.name !== "embedded";
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
  });
  afterAll(async () => {
    await db.close();
  });

  async function reset(r: Rng): Promise<void> {
    await db.admin`truncate product_daily_costs, products`;
    await loadProducts(db.admin, r);
    await bulkLoad(db.admin, randomRows(r, 600), viaCopy);
    await refreshRollup(db.admin);
  }

  const answers = async (from: string, to: string) =>
    (await Promise.all(SEGMENTS.map((segment) => naiveAnswer(db.service, from, to, segment)))).join("\n");

  test("a version seen again always comes with the same answers; a refresh changes none", async () => {
    const r = prng(SEED);
    await reset(r);
    const ranges = Array.from({ length: 8 }, () => randomRange(r));
    // range → version → the answers it was seen with
    const seen = new Map<string, Map<string, string>>();
    let repeats = 0;
    let changes = 0;
    const check = async (context: string) => {
      for (const [from, to] of ranges) {
        const version = await readAnswerVersion(db.service, from, to);
        const now = await answers(from, to);
        const byVersion = seen.get(`${from}..${to}`) ?? new Map<string, string>();
        seen.set(`${from}..${to}`, byVersion);
        const before = byVersion.get(version);
        if (before === undefined) {
          if (byVersion.size > 0) changes++;
          byVersion.set(version, now);
        } else {
          repeats++;
          expect({ seed: SEED, context, from, to, version, answers: now }).toEqual({ seed: SEED, context, from, to, version, answers: before });
        }
      }
    };
    await check("loaded");
    for (let round = 1; round <= 40; round++) {
      if (r.chance(0.25)) {
        const before = await Promise.all(ranges.map(([from, to]) => readAnswerVersion(db.service, from, to)));
        await refreshRollup(db.admin);
        const after = await Promise.all(ranges.map(([from, to]) => readAnswerVersion(db.service, from, to)));
        expect({ seed: SEED, round, versions: after }).toEqual({ seed: SEED, round, versions: before });
      } else {
        const what = await randomWrite(db.admin, r, viaCopy);
        await check(`round ${round}: after ${what}`);
      }
    }
    // Not vacuous: versions both stayed (and were checked) and moved.
    expect(repeats).toBeGreaterThan(0);
    expect(changes).toBeGreaterThan(0);
  }, 120_000);

  test("a write changes the version of the ranges holding its day, and of no other", async () => {
    await db.admin`truncate product_daily_costs, products`;
    await db.admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample) values (1, 1, 'A', 'Alpha', false)`;
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (1, '2024-03-10', 1), (1, '2024-03-20', 2)`;
    await refreshRollup(db.admin);
    const ranges: [string, string][] = [
      ["2024-03-01", "2024-03-14"], // holds the 10th
      ["2024-03-15", "2024-03-31"], // the same month, other days
      ["2024-03-10", "2024-03-10"],
      ["2024-01-01", "2024-12-31"],
      ["2024-04-01", "2024-04-30"],
    ];
    const versions = () => Promise.all(ranges.map(([from, to]) => readAnswerVersion(db.service, from, to)));
    const before = await versions();
    await db.admin`update product_daily_costs set purchase_cost_usd = 5 where cost_date = '2024-03-10'`;
    const waiting = await versions();
    expect(waiting.map((v, i) => v !== before[i])).toEqual([true, false, true, true, false]);
    await refreshRollup(db.admin);
    expect(await versions()).toEqual(waiting);
    // Rewriting the same values notes nothing: no version moves.
    await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd`;
    expect(await versions()).toEqual(waiting);
    // A product's attributes show in every range: every version moves, and so does a TRUNCATE.
    await db.admin`update products set product_name = 'Alpha 2' where product_id = 1`;
    const renamed = await versions();
    expect(renamed.every((v, i) => v !== waiting[i])).toBe(true);
    await db.admin`truncate product_daily_costs`;
    const truncated = await versions();
    expect(truncated.every((v, i) => v !== renamed[i])).toBe(true);
    await refreshRollup(db.admin);
    expect(await versions()).toEqual(truncated);
  });

  test("the time of the last change: moved by a write in the range, by nothing else", async () => {
    await db.admin`truncate product_daily_costs, products`;
    await db.admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample) values (1, 1, 'A', 'Alpha', false)`;
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (1, '2024-03-10', 1), (1, '2024-04-20', 2)`;
    await refreshRollup(db.admin);
    const march = () => readVersionAndTime(db.service, "2024-03-01", "2024-03-31");
    const before = (await march()).changedAt!;
    expect(before).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    await Bun.sleep(5);
    await db.admin`update product_daily_costs set purchase_cost_usd = 7 where cost_date = '2024-04-20'`; // April only
    expect((await march()).changedAt).toEqual(before);
    const [{ now } = { now: new Date(NaN) }] = await db.admin<{ now: Date }[]>`select statement_timestamp() as now`;
    await db.admin`update product_daily_costs set purchase_cost_usd = 5 where cost_date = '2024-03-10'`;
    const changed = (await march()).changedAt!;
    expect(Date.parse(changed)).toBeGreaterThan(Date.parse(before));
    expect(Date.parse(changed)).toBeGreaterThanOrEqual(Math.floor(now.getTime()));
    await refreshRollup(db.admin); // folded: the same time, now kept by the refresh
    expect((await march()).changedAt).toEqual(changed);
    // A range with no change ever recorded in it, its products never renamed: none.
    await db.admin`truncate product_cost_folded_changes`;
    expect((await readVersionAndTime(db.service, "2031-01-01", "2031-01-31")).changedAt).toBeNull();
  });

  test("two pools read the same version", async () => {
    const other = await backend.open();
    try {
      for (const [from, to] of [["2024-03-01", "2024-03-31"], ["2023-01-01", "2025-12-31"]] as const) {
        expect(await readAnswerVersion(other.service, from, to)).toBe(await readAnswerVersion(db.service, from, to));
      }
    } finally {
      if (other.service !== db.service) await other.close();
    }
  });

  test("the counts' table made again (dropped, restored by migrate) changes every version", async () => {
    const before = await readAnswerVersion(db.service, "2024-03-01", "2024-03-31");
    await db.admin`drop table product_cost_folded_changes`;
    expect(await migrate(db.admin)).toEqual(["0007 (restored product_cost_folded_changes)"]);
    expect(await readAnswerVersion(db.service, "2024-03-01", "2024-03-31")).not.toBe(before);
  });
});
