// The executable folding changes into the rollup by itself (REFRESH_DATABASE_URL), as an
// operator runs it without the refresh timer: it says so when it starts, a write shows in
// /metrics as a change waiting until its next turn folds it, and it stops cleanly.
// Reported as skipped where there is no PostgreSQL.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { waitUntil } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("the executable's own refresh", () => {
  let db: TestDatabase;
  let server: RunningBinary | undefined;
  beforeAll(async () => {
    db = await testDatabase();
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("REFRESH_DATABASE_URL: a change waits in /metrics until the service's next turn folds it", async () => {
    const bin = isolatedBinary();
    await db.admin`insert into products (product_id, erp_sku) values (990001, 'E2E-REFRESH') on conflict do nothing`;
    // The serving URL is read-only by the service's own sessions; the owner's is the same role here.
    server = await startBinary(bin.path, { DATABASE_URL: db.url, REFRESH_DATABASE_URL: db.url, REFRESH_INTERVAL_S: "1", PRODUCT_COST_API_KEYS: "k".repeat(20) }, [], bin.dir);
    expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ refresh: "by the service, every 1 s" });
    const waiting = async () => {
      const text = await (await fetch(`${server!.url}/metrics`)).text();
      return Number(/^product_cost_export_rollup_changes_waiting (\d+)$/m.exec(text)?.[1]);
    };
    await waitUntil("nothing waiting", async () => (await waiting()) === 0);
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (990001, '2024-06-06', 4.25)`;
    expect(await waiting()).toBeGreaterThan(0);
    await waitUntil("the change folded", async () => (await waiting()) === 0, 10_000);
    await server.waitForLine((l) => l.msg === "refreshed" && l.mode === "changes" && l.by === "service");
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=2024-06-01&month_to=2024-06-30&segment=all`, {
      headers: { authorization: `Bearer ${"k".repeat(20)}` },
    });
    expect((await res.text()).includes('{"erp_product_id":null,"erp_sku":"E2E-REFRESH","product_name":null,"purchase_cost_usd":4.25,')).toBe(true);
    expect(await server.stop()).toBe(0);
    expect(server.lines.filter((l) => l.level === "warn" || l.level === "error")).toEqual([]);
    await db.admin`delete from product_daily_costs where product_id = 990001`;
    await db.admin`delete from products where product_id = 990001`;
    server = undefined;
  }, 60_000);
});
