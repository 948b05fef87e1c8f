// The in-process app is the one `serve` assembles (service/service.ts): the demo's header and the
// database guard apply here as in the executable, so the other tests see what it runs.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPool, type Sql } from "../../src/database/client.ts";
import { testApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { namedPool } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const UNAVAILABLE = '{"detail":"DATABASE_UNAVAILABLE"}';

describeWithPostgres("the service as serve assembles it", () => {
  let db: TestDatabase;
  let sql: Sql;
  beforeAll(async () => {
    db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    sql = namedPool(db.url, `pce-service-${process.pid}`);
  });
  afterAll(() => sql.end({ timeout: 2 }));

  test("a database serving the demo data: every answer says X-Demo-Data: true, and /readyz says data: demo", async () => {
    const demo = testApp(sql, { demoData: true });
    const ok = await demo.get(JAN);
    expect({ status: ok.status, demo: ok.headers.get("x-demo-data"), body: await ok.text() }).toEqual({ status: 200, demo: "true", body: JANUARY_NORMAL });
    const refused = await demo.get(JAN, {});
    expect({ status: refused.status, demo: refused.headers.get("x-demo-data") }).toEqual({ status: 401, demo: "true" });
    const ready = await demo.get("/readyz", {});
    // (With no refresh run, /readyz names the rollup's lag too: not what this test is about.)
    expect({ demo: ready.headers.get("x-demo-data"), body: await ready.json() }).toMatchObject({ demo: "true", body: { detail: "READY", data: "demo" } });

    // Real data says nothing of the kind.
    const real = testApp(sql);
    const answer = await real.get(JAN);
    expect({ status: answer.status, demo: answer.headers.get("x-demo-data") }).toEqual({ status: 200, demo: null });
    const realReady = (await (await real.get("/readyz", {})).json()) as Record<string, unknown>;
    expect({ detail: realReady.detail, data: realReady.data }).toEqual({ detail: "READY", data: undefined });
  });

  test("a peer that is not PostgreSQL: the guard answers the next requests at once, without a connection each", async () => {
    let accepted = 0;
    const peer = Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open: () => void accepted++,
        data: (socket) => void socket.end("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"),
      },
    });
    const pool = createPool({ url: `postgres://postgres@127.0.0.1:${peer.port}/pce`, max: 4, connectTimeoutMs: 3000, statementTimeoutMs: 5000, readOnly: true, applicationName: "pce-guard" });
    try {
      const app = testApp(pool);
      const first = await app.get(JAN);
      expect({ status: first.status, body: await first.text() }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(app.logs.find((l) => l.msg === "database not usable")).toMatchObject({ level: "error", problem: "NOT_POSTGRESQL" });
      const before = accepted;
      expect(before).toBeGreaterThan(0);
      // Held back: the guard lets one probe through after 250 ms at the earliest, so twenty
      // requests together open one connection at most (with no guard, one each).
      const answers = await Promise.all(Array.from({ length: 20 }, async () => {
        const r = await app.get(JAN);
        return `${r.status} ${await r.text()}`;
      }));
      // /readyz names the problem, through the same guard.
      const ready = await app.get("/readyz", {});
      expect({ status: ready.status, detail: ((await ready.json()) as { detail: string }).detail }).toEqual({ status: 503, detail: "NOT_POSTGRESQL" });
      expect(new Set(answers)).toEqual(new Set([`503 ${UNAVAILABLE}`]));
      expect(accepted - before).toBeLessThanOrEqual(1);
    } finally {
      await pool.end({ timeout: 1 });
      peer.stop(true);
    }
  });
});
