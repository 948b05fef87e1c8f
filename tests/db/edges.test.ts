// A range from two edges (src/reads/edges/edges.ts, range-read.ts, issue 53's design) against the plain
// GROUP BY, at one snapshot: random products and daily rows (far dates, NaN, nulls, every
// amount's domain: tests/support/random-writes.ts), then random writes (inserts, upserts,
// updates of amounts, dates and ids, deletes, COPY, TRUNCATE and reload, rolled back ones),
// refreshes of random step sizes now and then (so notes wait, or are folded, or a rebuild's
// everything waits), and ranges of every shape whose rollup reads as edges, with edges and the
// catalogue held from one read to the next under their keys: each must be byte for byte the
// GROUP BY's answer in the same REPEATABLE READ transaction.
// Seeded: the seed is printed; replay a failure with SEED=<seed>.

import { beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { dayBefore } from "../../src/reads/edges/range-read.ts";
import { EdgeStore } from "../../src/reads/edges/edge-store.ts";
import { keepPartsIn, rangeFactsStatement, rangeRowsIn } from "../../src/reads/edges/range-read.ts";
import { productCostRowsIn } from "../../src/reads/product-costs.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { testDatabase } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bulkLoad, loadProducts, prng, randomRange, randomRows, randomWrite, SEGMENTS, type Sql as WriteSql } from "../support/random-writes.ts";
import { naiveAnswer, rowsAsJson } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

describeWithPostgres("a range from two edges", () => {
  const SEED = testSeed("edges property test");
  let admin: Sql;

  beforeAll(async () => {
    admin = (await testDatabase()).admin;
  });

  test("every range equals the GROUP BY at its snapshot, whatever the writes and refreshes before it and the edges held from them", async () => {
    const r = prng(SEED);
    await admin`truncate product_daily_costs, products`;
    await loadProducts(admin as unknown as WriteSql, r);
    await bulkLoad(admin as unknown as WriteSql, randomRows(r, 1200), true);
    await refreshRollup(admin);
    // Held across every write and refresh, as the service holds them; and small, so that edges
    // are let go and read again.
    const held = new EdgeStore(1 << 20);
    const seen = { compared: 0, rows: 0, skipped: 0 };
    let last: { to: string } | undefined;
    for (let round = 0; round < 25; round++) {
      await randomWrite(admin, r, true);
      if (r.chance(0.4)) await refreshRollup(admin, { stepRows: r.pick([1, 20, 1_000_000]) });
      for (let q = 0; q < 6; q++) {
        // Now and then a range that shares its last day (an edge) with the one before.
        let [from, to] = randomRange(r);
        if (last && r.chance(0.35)) [from, to] = [from > last.to ? last.to : from, last.to];
        last = { to };
        const segment = r.pick(SEGMENTS);
        await admin.begin("isolation level repeatable read", async (tx) => {
          const query = { monthFrom: from, monthTo: to, segment };
          const rows = await rangeRowsIn(tx as unknown as Sql, query, held);
          if (rows === null) return void seen.skipped++; // no window, or a note of everything: read from the daily rows
          // The head's keys are the function's versions of the edges' spans and of the whole domain.
          const head = rangeFactsStatement(query);
          const [facts] = (await tx.unsafe(head.text, head.params)) as unknown as Record<string, string | null>[];
          const [fn] = (await tx.unsafe(
            `select (select version from product_cost_answer_version(window_first, $2::date)) as through_version,
                    case when $1::date > window_first then (select version from product_cost_answer_version(window_first, $1::date - 1)) end as before_version,
                    (select version from product_cost_answer_version('0001-01-01', '9999-12-31')) as catalogue_version
             from product_cost_refreshes`,
            [from, to],
          )) as unknown as Record<string, string | null>[];
          expect({ from, to, through: facts!.through_version, before: facts!.before_version, catalogue: facts!.catalogue_version }).toEqual({
            from,
            to,
            through: to >= facts!.window_first! ? fn!.through_version! : null,
            before: fn!.before_version ?? null,
            catalogue: fn!.catalogue_version!,
          });
          const answer = rowsAsJson(rows);
          const naive = await naiveAnswer(tx as unknown as WriteSql, from, to, segment);
          expect({ seed: SEED, round, from, to, segment, answer }).toEqual({ seed: SEED, round, from, to, segment, answer: naive });
          seen.compared++;
          seen.rows += rows.length;
        });
      }
    }
    const stats = held.stats();
    // Most ranges were read from the edges (a TRUNCATE's note makes a few wait for the next refresh).
    expect(seen.compared).toBeGreaterThan(100);
    expect(seen.compared + seen.skipped).toBe(150);
    expect(seen.rows).toBeGreaterThan(seen.compared);
    // Edges were held and found again, within the bound.
    expect(stats.hits).toBeGreaterThan(10);
    expect(stats.bytes).toBeLessThanOrEqual(1 << 20);
  }, 180_000);
});

describeWithPostgres("the service's read of a range, with parts kept in the background", () => {
  const SEED = testSeed("edges kept in the background");
  let admin: Sql;

  beforeAll(async () => {
    admin = (await testDatabase()).admin;
  });

  // As the service reads: each range by its statement or, with every part held, as edges
  // (product-costs.ts); what a read lacked kept afterwards in a snapshot of its own
  // (keepPartsIn, as edge-warmer.ts runs it), with writes and refreshes in between. A range just
  // kept is often asked next, as a dashboard asks again what it asked: read from what was kept,
  // unless a write in between moved its keys.
  test("every range equals the GROUP BY at its snapshot, whichever way it was read and whenever its parts were kept", async () => {
    const r = prng(SEED);
    await admin`truncate product_daily_costs, products`;
    await loadProducts(admin as unknown as WriteSql, r);
    await bulkLoad(admin as unknown as WriteSql, randomRows(r, 1200), true);
    await refreshRollup(admin);
    const held = new EdgeStore(1 << 20);
    let compared = 0;
    let last: { to: string } | undefined;
    const asked: [string, string][] = [];
    for (let round = 0; round < 20; round++) {
      await randomWrite(admin, r, true);
      if (r.chance(0.4)) await refreshRollup(admin, { stepRows: r.pick([1, 20, 1_000_000]) });
      for (let q = 0; q < 6; q++) {
        let [from, to] = randomRange(r);
        if (last && r.chance(0.5)) [from, to] = [from > last.to ? last.to : from, last.to];
        last = { to };
        // The warmer's turn: a range asked before (maybe this one), kept at the state now.
        if (asked.length && r.chance(0.7)) {
          const [kf, kt] = r.pick(asked);
          await admin.begin("isolation level repeatable read read only", (tx) => keepPartsIn(tx as unknown as Sql, { monthFrom: kf, monthTo: kt, segment: "all" }, held));
          if (r.chance(0.4)) [from, to] = [kf, kt];
        }
        asked.push([from, to]);
        if (r.chance(0.3)) await randomWrite(admin, r, false);
        const segment = r.pick(SEGMENTS);
        await admin.begin("isolation level repeatable read", async (tx) => {
          const rows = await productCostRowsIn(tx as unknown as Sql, { monthFrom: from, monthTo: to, segment }, held);
          const naive = await naiveAnswer(tx as unknown as WriteSql, from, to, segment);
          expect({ seed: SEED, round, from, to, segment, answer: rowsAsJson(rows) }).toEqual({ seed: SEED, round, from, to, segment, answer: naive });
          compared++;
        });
      }
    }
    expect(compared).toBe(120);
    // Ranges were read as edges found held (the rest by their statement: most writes move the
    // edges' versions). About 120 × 0.7 × 0.4 ranges are asked right after being kept.
    expect(held.stats().hits).toBeGreaterThan(5);
  }, 180_000);
});

describeWithPostgres("a range while many notes wait", () => {
  let admin: Sql;

  beforeAll(async () => {
    admin = (await testDatabase()).admin;
  });

  test("past 1,000 notes the head computes no keys: ranges are read by their statement, exact, nothing held is used or kept; after the refresh, keys again", async () => {
    const r = prng(1001);
    await admin`truncate product_daily_costs, products`;
    await loadProducts(admin as unknown as WriteSql, r);
    await bulkLoad(admin as unknown as WriteSql, randomRows(r, 1200), true);
    await refreshRollup(admin);
    const query = { monthFrom: "2023-12-10", monthTo: "2024-03-20", segment: "all" } as const;
    const held = new EdgeStore(1 << 24);
    const keep = () => admin.begin("isolation level repeatable read read only", (tx) => keepPartsIn(tx as unknown as Sql, query, held));
    expect(await keep()).toBe(true);
    const edgesNow = async () => {
      const head = rangeFactsStatement(query);
      const [row] = (await admin.unsafe(head.text, head.params)) as unknown as Record<string, string | null>[];
      return { edges: row!.edges, through: row!.through_version !== null, catalogue: row!.catalogue_version !== null };
    };
    expect(await edgesNow()).toEqual({ edges: "true", through: true, catalogue: true });
    // 1,001 writes, each its own statement and note, inside the range.
    await admin.unsafe(`do $$ begin
      for i in 1..1001 loop
        update product_daily_costs set purchase_cost_usd = case when purchase_cost_usd = 1 then 2 else 1 end
        where (product_id, cost_date) = (select product_id, cost_date from product_daily_costs where cost_date between '2024-01-01' and '2024-03-01' order by product_id, cost_date offset i % 50 limit 1);
      end loop; end $$`);
    const [{ notes }] = (await admin`select count(*)::int as notes from product_cost_deltas`) as unknown as [{ notes: number }];
    expect(notes).toBe(1001);
    expect(await edgesNow()).toEqual({ edges: "false", through: false, catalogue: false });
    const before = held.stats();
    await admin.begin("isolation level repeatable read", async (tx) => {
      const rows = await productCostRowsIn(tx as unknown as Sql, query, held);
      expect(rowsAsJson(rows)).toEqual(await naiveAnswer(tx as unknown as WriteSql, query.monthFrom, query.monthTo, query.segment));
    });
    expect(await keep()).toBe(false);
    expect(held.stats()).toEqual(before);
    await refreshRollup(admin);
    expect(await edgesNow()).toEqual({ edges: "true", through: true, catalogue: true });
  }, 60_000);
});

test("the day before a range's first: across months, years and leap days; none before 0001-01-01", () => {
  expect(["2024-03-01", "2023-03-01", "2025-01-01", "0001-01-02", "0001-01-01", "9999-12-31", "0100-03-01"].map(dayBefore)).toEqual([
    "2024-02-29",
    "2023-02-28",
    "2024-12-31",
    "0001-01-01",
    null,
    "9999-12-30",
    "0100-02-28",
  ]);
});
