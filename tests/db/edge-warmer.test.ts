// The edge warmer (src/reads/edges/edge-warmer.ts): what a range's read lacked is read in the background
// only once the service has been quiet for QUIET_MS, kept under the keys of its own snapshot, one range at a time,
// with a bounded list of ranges waiting; a failure is logged and forgotten.

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { EdgeStore } from "../../src/reads/edges/edge-store.ts";
import { createEdgeWarmer, QUIET_MS } from "../../src/reads/edges/range-read.ts";
import { factsOf, partsToRead, rangeFactsStatement } from "../../src/reads/edges/range-read.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import type { ProductCostQuery } from "../../src/query/product-cost-params.ts";
import { servicePool, testDatabase } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bulkLoad, loadProducts, prng, randomRows, type Sql as WriteSql } from "../support/random-writes.ts";

describeWithPostgres("the edge warmer", () => {
  let admin: Sql;
  let pool: Sql;

  beforeAll(async () => {
    admin = (await testDatabase()).admin;
    pool = await servicePool();
    const r = prng(53);
    await admin`truncate product_daily_costs, products`;
    await loadProducts(admin as unknown as WriteSql, r);
    await bulkLoad(admin as unknown as WriteSql, randomRows(r, 600), true);
    await refreshRollup(admin);
  });

  afterAll(async () => {
    await pool.end({ timeout: 5 });
  });

  const range: ProductCostQuery = { monthFrom: "2024-01-10", monthTo: "2024-02-20", segment: "normal" };

  /** What a read of `q` as edges would read now, with `store` as it is. */
  const missing = async (q: ProductCostQuery, store: EdgeStore) => {
    const head = rangeFactsStatement(q);
    const [row] = (await admin.unsafe(head.text, head.params).raw()) as unknown as (Uint8Array | null)[][];
    return partsToRead(q, factsOf(row!), store);
  };

  test("a range offered is read only once the service has been quiet for QUIET_MS, in a slot; its catalogue and both edges are then held at the data's current keys", async () => {
    const store = new EdgeStore(1 << 24);
    let busy = true;
    let begun = 0;
    let slots = 0;
    const warmer = createEdgeWarmer({ sql: pool, store, activity: () => ({ busy, begun }), inSlot: (work) => (slots++, work()) });
    expect(await missing(range, store)).toBe(3);
    warmer.offer(range);
    warmer.offer({ ...range, segment: "sample" }); // the same edges: one range waiting
    expect(warmer.pending()).toBe(1);
    await Bun.sleep(QUIET_MS);
    expect({ slots, pending: warmer.pending(), missing: await missing(range, store) }).toEqual({ slots: 0, pending: 1, missing: 3 });
    // Idle now, but reads keep beginning (each ends between two polls): still not quiet.
    busy = false;
    const started = performance.now();
    const reads = setInterval(() => begun++, 10);
    await Bun.sleep(QUIET_MS * 2);
    clearInterval(reads);
    expect({ slots, pending: warmer.pending() }).toEqual({ slots: 0, pending: 1 });
    await warmer.settled();
    expect(performance.now() - started).toBeGreaterThanOrEqual(QUIET_MS * 3 - 5);
    expect({ slots, pending: warmer.pending(), missing: await missing(range, store) }).toEqual({ slots: 1, pending: 0, missing: 0 });
    // A write inside the range moves the edge through its last day (and the catalogue's key).
    const [{ n }] = (await admin`with gone as (delete from product_daily_costs where cost_date = (select min(cost_date) from product_daily_costs where cost_date between '2024-02-01' and '2024-02-20') returning 1) select count(*)::int as n from gone`) as unknown as [{ n: number }];
    expect(n).toBeGreaterThan(0);
    expect(await missing(range, store)).toBe(2);
  });

  test("at most eight ranges wait; none at EDGE_CACHE_MB=0", async () => {
    const store = new EdgeStore(1 << 24);
    const warmer = createEdgeWarmer({ sql: pool, store, activity: () => ({ busy: true, begun: 0 }), inSlot: (work) => work() });
    for (let day = 10; day < 20; day++) warmer.offer({ monthFrom: `2024-01-${day}`, monthTo: "2024-03-01", segment: "all" });
    expect(warmer.pending()).toBe(8);
    const none = createEdgeWarmer({ sql: pool, store: new EdgeStore(0), activity: () => ({ busy: false, begun: 0 }), inSlot: (work) => work() });
    none.offer(range);
    expect(none.pending()).toBe(0);
  });

  test("a failed read is logged at debug and forgotten: nothing held, the next offer is read", async () => {
    const store = new EdgeStore(1 << 24);
    const logged: [string, Record<string, unknown>][] = [];
    let fail = true;
    const warmer = createEdgeWarmer({
      sql: pool,
      store,
      activity: () => ({ busy: false, begun: 0 }),
      inSlot: (work) => (fail ? Promise.reject(new Error("no slot")) : work()),
      debug: (msg, fields) => logged.push([msg, fields]),
    });
    warmer.offer(range);
    await warmer.settled();
    expect(logged).toEqual([["edges not kept", { month_from: "2024-01-10", month_to: "2024-02-20", error: "no slot" }]]);
    expect(await missing(range, store)).toBe(3);
    fail = false;
    warmer.offer(range);
    await warmer.settled();
    expect(await missing(range, store)).toBe(0);
  });
});
