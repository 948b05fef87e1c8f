// The probe of tests/bench/request-files.ts (not a test of the suite: its name matches no
// test pattern, and the driver runs it by path). It assembles the service in process, loads the
// endpoint's fixture and refreshes, warms every path with one request to another range, then,
// when PROBE_REQUEST=1, sends the measured request: a computed 200 (a range that is no calendar
// period, JSON, a valid key), or a 401 when PROBE_KIND=401. The driver compares the lines each
// file ran with and without that request.

import { afterAll, expect, test } from "bun:test";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { KEY, testApp } from "../support/app.ts";
import { dropTestDatabase, servicePool, testDatabase } from "../support/database.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "../http/fixture.ts";

const path = (from: string, to: string) => `/external/v1/product-costs?month_from=${from}&month_to=${to}`;

afterAll(async () => {
  await dropTestDatabase();
});

test("the probe's request", async () => {
  const db = await testDatabase();
  await loadFixture(db.admin, PRODUCTS, DAILY);
  await refreshRollup(db.admin);
  const sql = await servicePool();
  const app = testApp(sql);
  const auth = { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" };
  // The warm-up: every module loaded and every path of a computed 200 and of a 401 run once.
  expect((await app.get(path("2024-01-03", "2024-01-17"), auth)).status).toBe(200);
  expect((await app.get(path("2024-01-03", "2024-01-17"), { authorization: "Bearer wrong" })).status).toBe(401);
  if (process.env.PROBE_REQUEST === "1") {
    const res = process.env.PROBE_KIND === "401" ? await app.get(path("2024-01-04", "2024-01-18"), { authorization: "Bearer wrong" }) : await app.get(path("2024-01-04", "2024-01-18"), auth);
    await res.arrayBuffer();
    expect(res.status).toBe(process.env.PROBE_KIND === "401" ? 401 : 200);
    await Bun.sleep(50); // the exchange closes (its log line, the metrics) once the body has ended
  }
  await sql.end({ timeout: 1 });
});
