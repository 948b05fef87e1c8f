// Issue 52: an answer equals the GROUP BY at some commit inside its request's window, whatever
// the refresh commits meanwhile. The race is not left to chance: the refresh is held before
// each of its commits (its helpers' too), and at each, reads of several ranges are started and
// held where a commit can split them, as PostgreSQL's isolation tester interleaves sessions:
//   planned before the commit, snapshot after: the read's planning waits for a lock on a month's
//     partition (the test holds every partition), having read the partitions it plans with;
//     the commit goes through, then the read goes on. Before the fix the rows statement took
//     its snapshot only after planning: a month's partition attached, its first row folded and
//     its note deleted by that commit, the row was in neither;
//   snapshot before the commit, planned after: the read's version taken, its next statement held
//     on the server (an advisory lock of the test's) until the commit went through.
// The ETL's write commits before the refresh, so every answer must be the GROUP BY of then, and
// name the version of then. Against real PostgreSQL; every partition, plan and lock is real.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPool, type Sql } from "../../src/database/client.ts";
import { readAnswerVersion } from "../../src/reads/product-costs.ts";
import { EdgeStore } from "../../src/reads/edges/edge-store.ts";
import { readProductCosts, type ProductCostRead } from "../../src/reads/product-costs.ts";
import { keepPartsIn } from "../../src/reads/edges/range-read.ts";
import lockRollupRead from "../../sql/queries/lock_rollup_read.sql" with { type: "text" };
import { openRead } from "../../src/reads/read.ts";
import { refreshRollup, type RefreshOptions } from "../../src/rollup/refresh.ts";
import { rowsSource } from "../../src/body/encode.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { namedPool, waitUntil } from "../support/faults.ts";
import { endSessions, heldAfterHead, heldCommits, waitForLocks, type HeldCommit } from "../support/interleave.ts";
import { loadDenseFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import naiveQuery from "./naive_product_costs.sql" with { type: "text" };

type Range = readonly [from: string, to: string];

const ADVISORY_KEY = 52_001;

describeWithPostgres("the refresh's every commit between a read's planning and its snapshot", () => {
  const suffix = `${process.pid}`;
  const names = { planned: `pce-planned-${suffix}`, snapshot: `pce-snapshot-${suffix}`, blocker: `pce-blocker-${suffix}`, holder: `pce-holder-${suffix}` };
  let db: TestDatabase;
  let planned: Sql; // reads whose planning waits for the test's partition locks
  let snapshotFirst: Sql; // reads held after their snapshot's head
  let blocker: Sql;
  let holder: Sql;

  beforeAll(async () => {
    db = await testDatabase();
    planned = namedPool(db.url, names.planned, { max: 10 });
    snapshotFirst = heldAfterHead(namedPool(db.url, names.snapshot, { max: 10 }), ADVISORY_KEY);
    const writable = (name: string) => createPool({ url: db.url, max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: false, applicationName: name });
    blocker = writable(names.blocker);
    holder = writable(names.holder);
    // 40 products, every day from January to May 2026: the rollup's months and their partitions.
    await loadDenseFixture(db.admin, { products: 40, from: "2026-01-01", to: "2026-05-31" });
    await refreshRollup(db.admin, { rebuild: true });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([planned, snapshotFirst, blocker, holder].map((p) => p.end({ timeout: 2 })));
  });

  /** What the reads hold between them (edge-store.ts), in the tests that give them one; else every range by its statement. */
  let held: EdgeStore | undefined;

  /** The body the service writes for `range`'s rows (JSON), and the version it names, read to their end. */
  async function answer(sql: Sql, [from, to]: Range): Promise<{ body: string; version: string | undefined }> {
    const read = await readProductCosts(sql, { monthFrom: from, monthTo: to, segment: "all" }, { firstBatchTimeoutMs: 60_000, batchSize: 7, rendered: true, ...(held ? { edges: held } : {}) });
    return { body: await bodyOf(read), version: read.version?.version };
  }

  async function bodyOf(read: ProductCostRead): Promise<string> {
    const source = rowsSource(read, "json", { rows: 0 });
    const chunks: Uint8Array[] = [];
    for (let chunk = await source.next(); chunk; chunk = await source.next()) chunks.push(chunk);
    return Buffer.concat(chunks).toString();
  }

  /** The plain GROUP BY's body for `range`, encoded the same way. */
  async function groupBy([from, to]: Range): Promise<string> {
    const read = await openRead<never>(db.admin, [{ statement: { text: naiveQuery, params: [from, to, "all"] }, batchSize: 1000 }], { firstBatchTimeoutMs: 60_000 });
    return await bodyOf({ kind: "rows", read, from: "daily" });
  }

  /** The months' partitions, every one: the planning of a read over several months locks them all. */
  async function partitions(): Promise<string[]> {
    const rows = await db.admin<{ name: string }[]>`select inhrelid::regclass::text as name from pg_inherits where inhparent = 'product_cost_months'::regclass order by 1`;
    return rows.map((r) => r.name);
  }

  /**
   * Runs the refresh; before each commit, reads of `ranges` are started and held both ways (the
   * planned ones only over several months: a range of one month or a day may plan no partition
   * at all), then the commit goes through, then the reads. Returns what each read got, by commit.
   */
  async function interleaved(ranges: readonly Range[], options: RefreshOptions = {}) {
    // Reads from held edges plan no partition of the months: none waits on the test's locks.
    const several = held ? [] : ranges.filter(([from, to]) => from.slice(0, 7) !== to.slice(0, 7));
    const outcomes: { commit: number; way: string; range: Range; body: string; version: string | undefined }[] = [];
    let chain = Promise.resolve();
    const failures: unknown[] = [];
    const atCommit = async (commit: HeldCommit) => {
      // The test's locks: every partition (the planned reads wait on them, having read the
      // partitions they plan with), and the advisory lock (the snapshot-first reads wait on it).
      const parts = await partitions();
      const blocking = blocker.unsafe(`begin; lock table ${parts.join(", ")} in access exclusive mode`).execute();
      blocking.catch(() => {}); // ended with its session below
      await waitUntil("the test's partition locks are had or waited for", async () => (await db.admin`select 1 from pg_stat_activity where split_part(application_name, ' ', 1) = ${names.blocker} and (state = 'idle in transaction' or wait_event_type = 'Lock')`).length > 0);
      const holding = holder.unsafe(`begin; select pg_advisory_xact_lock(${ADVISORY_KEY})`).execute();
      await holding;
      const reads = [
        ...several.map((range) => ({ way: "planned before the commit", range, read: answer(planned, range) })),
        ...ranges.map((range) => ({ way: "snapshot before the commit", range, read: answer(snapshotFirst, range) })),
      ];
      for (const r of reads) r.read.catch(() => {});
      await waitForLocks(db.admin, names.planned, several.length);
      await waitForLocks(db.admin, names.snapshot, ranges.length);
      commit.proceed();
      await commit.done;
      await endSessions(db.admin, names.blocker);
      await endSessions(db.admin, names.holder);
      for (const { way, range, read } of reads) outcomes.push({ commit: commit.index, way, range, ...(await read) });
    };
    const refresh = refreshRollup(
      heldCommits(db.admin, (commit) => {
        chain = chain.then(() => atCommit(commit)).catch((err) => void (failures.push(err), commit.proceed()));
      }),
      options,
    );
    await refresh;
    await chain;
    expect(failures).toEqual([]);
    return outcomes;
  }

  /** Every outcome is the GROUP BY's body of its range, and names the version read before the refresh. */
  async function expectExact(ranges: readonly Range[], options?: RefreshOptions) {
    const expected = new Map<string, { body: string; version: string }>();
    for (const range of ranges) expected.set(range.join(" "), { body: await groupBy(range), version: (await readAnswerVersion(db.admin, range[0], range[1])).version });
    const outcomes = await interleaved(ranges, options);
    expect(outcomes.length).toBeGreaterThan(ranges.length);
    const wrong = outcomes.filter((o) => o.body !== expected.get(o.range.join(" "))!.body || o.version !== expected.get(o.range.join(" "))!.version);
    expect(wrong.map((o) => `commit ${o.commit}, ${o.way}, ${o.range.join(" to ")}`)).toEqual([]);
    // Afterwards, with nothing held, the same.
    for (const range of ranges) expect(await answer(planned, range)).toEqual(expected.get(range.join(" "))!);
  }

  const RANGES: readonly Range[] = [
    ["2026-03-10", "2026-06-01"],
    ["2026-02-01", "2026-06-30"],
    ["2026-05-20", "2026-06-10"],
    ["2025-12-15", "2026-02-14"],
    ["2026-06-01", "2026-06-30"],
    ["2026-06-01", "2026-06-01"],
    ["2026-02-01", "2026-02-28"],
  ];

  test("a new month's first row: its partition made and attached, the window widened, the months extended", async () => {
    await db.admin`insert into product_daily_costs values (7, '2026-06-01', 10, 20, 30, 40)`;
    await expectExact(RANGES);
  }, 120_000);

  test("a backfill before the window: the window widened at its start", async () => {
    await db.admin`insert into product_daily_costs select p, '2025-12-20', 1, 2, 3, 4 from generate_series(3, 4) p`;
    await expectExact(RANGES);
  }, 120_000);

  test("a correction of an old month and a rename", async () => {
    await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 0.125 where product_id = 5 and cost_date between '2026-02-10' and '2026-02-12'`;
    await db.admin`update products set product_name = 'Renamed' where product_id = 9`;
    await expectExact(RANGES);
  }, 120_000);

  test("a rebuild after the last month's rows were deleted: the window shrinks, its partition is dropped", async () => {
    await db.admin`delete from product_daily_costs where cost_date >= '2026-06-01'`;
    await expectExact(RANGES, { rebuild: true });
    expect((await partitions()).some((p) => p.endsWith("2026_06"))).toBe(false);
  }, 120_000);

  test("ranges read from edges held from before the refresh: at its every commit the same answer, whichever commit moved their keys", async () => {
    await db.admin`update product_daily_costs set inbound_freight_usd = inbound_freight_usd + 1.5 where product_id between 2 and 30 and cost_date between '2026-03-01' and '2026-04-20'`;
    await db.admin`insert into product_daily_costs values (8, '2026-06-02', 1, 2, 3, 4)`;
    held = new EdgeStore(1 << 22);
    try {
      // Each range's parts kept as the warmer keeps them (edge-warmer.ts), at the state before the refresh.
      for (const [from, to] of RANGES) {
        await db.admin.begin("isolation level repeatable read read only", async (tx) => {
          await tx.unsafe(lockRollupRead);
          await keepPartsIn(tx as unknown as Sql, { monthFrom: from, monthTo: to, segment: "all" }, held!);
        });
      }
      const before = held.stats().hits;
      await expectExact(RANGES);
      // The fold's commits moved no key: ranges were read from what was held, at those commits.
      expect(held.stats().hits).toBeGreaterThan(before);
    } finally {
      held = undefined;
    }
  }, 120_000);

  test("a read whose snapshot precedes a rebuild and whose rows are planned after its partition drop: the drop waits, the answer is exact", async () => {
    // The tables are locked before the snapshot: without that, the drop of a partition the
    // snapshot still sees rows in committed before the plan was made, and those rows went missing.
    await db.admin`insert into product_daily_costs values (7, '2026-06-01', 10, 20, 30, 40)`;
    await refreshRollup(db.admin);
    expect((await partitions()).some((p) => p.endsWith("2026_06"))).toBe(true);
    await db.admin`delete from product_daily_costs where cost_date >= '2026-06-01'`;
    const range: Range = ["2026-03-10", "2026-06-15"];
    const expected = { body: await groupBy(range), version: (await readAnswerVersion(db.admin, range[0], range[1])).version };
    await holder.unsafe(`begin; select pg_advisory_xact_lock(${ADVISORY_KEY})`);
    const read = answer(snapshotFirst, range);
    read.catch(() => {});
    await waitForLocks(db.admin, names.snapshot, 1);
    await refreshRollup(db.admin, { rebuild: true });
    await endSessions(db.admin, names.holder);
    expect(await read).toEqual(expected);
    // The partition stayed (empty) for the next rebuild, which drops it.
    expect((await partitions()).some((p) => p.endsWith("2026_06"))).toBe(true);
    await refreshRollup(db.admin, { rebuild: true });
    expect((await partitions()).some((p) => p.endsWith("2026_06"))).toBe(false);
  }, 120_000);
});
