// Hostile input, property-based: 10,000 generated requests (arbitrary query bytes,
// percent-escapes, huge values, repeated and unknown parameters, odd and huge headers, long
// Authorization values, other methods) through the in-process app on a real database.
// Every answer: no 5xx, a body of the documented JSON shape, and memory stays flat.
// The seed is printed; SEED=<n> replays a run.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { Sql } from "../../src/database/client.ts";
import { MAX_HEADER_BYTES, MAX_REQUEST_TARGET_BYTES } from "../../src/edge/routes.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { testDatabase } from "../support/database.ts";
import { namedPool } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { contractBreach, hostileRequest, METHODS_IN_PROCESS, PATH, type HostileRequest } from "../support/hostile.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { testSeed } from "../support/seed.ts";

describeWithPostgres("hostile input in process", () => {
  const SEED = testSeed("hostile input in process");
  const RUNS = 10_000;

  let sql: Sql;
  let app: TestApp;

  beforeAll(async () => {
    const db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    sql = namedPool(db.url, `pce-hostile-${process.pid}`, { max: 4 });
    app = testApp(sql);
  }, 60_000);

  afterAll(async () => {
    await sql.end({ timeout: 2 });
  }, 30_000);

  function toRequest(r: HostileRequest): Request {
    return new Request(`http://localhost${r.target}`, { method: r.method, headers: r.headers });
  }

  const describeRequest = (r: HostileRequest) =>
    JSON.stringify({ method: r.method, target: r.target.slice(0, 300), headers: r.headers.map(([k, v]) => [k, v.slice(0, 100)]) });

  const heapMb = () => {
    Bun.gc(true);
    return process.memoryUsage().heapUsed / 2 ** 20;
  };

  test(`${RUNS} generated requests: never a 5xx, always JSON of the documented shape, flat memory`, async () => {
    const statuses = new Map<number, number>();
    let runs = 0;
    let heapAfterWarmup = 0;
    await fc.assert(
      fc.asyncProperty(hostileRequest(METHODS_IN_PROCESS, KEY), async (r) => {
        const res = await app.handle(toRequest(r));
        const answer = { status: res.status, headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const breach = contractBreach(r, answer);
        if (breach) throw new Error(`${breach} for ${describeRequest(r)}`);
        if (++runs === 1000) heapAfterWarmup = heapMb();
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: true },
    );
    const growth = heapMb() - heapAfterWarmup;
    // The mix reached every stage: auth, validation, range check, the database, the limits.
    for (const status of [200, 401, 404, 405, 414, 422, 431]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
    console.log(JSON.stringify({ statuses: Object.fromEntries(statuses), heap_growth_mb: Math.round(growth * 10) / 10 }));
    expect(statuses.get(200)!).toBeGreaterThan(RUNS / 40);
    expect(growth).toBeLessThan(16);
  }, 120_000);

  describe("size limits answered by the app, as JSON", () => {
    const get = (target: string, headers: Record<string, string> = { authorization: `Bearer ${KEY}` }) =>
      app.handle(new Request(`http://localhost${target}`, { headers }));
    const answer = async (res: Promise<Response>) => {
      const r = await res;
      return { status: r.status, type: r.headers.get("content-type"), body: await r.text() };
    };
    const base = `${PATH}?month_from=2024-01-01&month_to=2024-01-31&pad=`;

    test("a request target of exactly 64 KiB is answered normally", async () => {
      const target = base + "x".repeat(MAX_REQUEST_TARGET_BYTES - base.length);
      expect(target.length).toBe(MAX_REQUEST_TARGET_BYTES);
      expect(await answer(get(target))).toEqual({ status: 200, type: "application/json", body: JANUARY_NORMAL });
    });

    test("one byte more: 414 URI Too Long", async () => {
      const target = base + "x".repeat(MAX_REQUEST_TARGET_BYTES - base.length + 1);
      expect(await answer(get(target))).toEqual({ status: 414, type: "application/json", body: '{"detail":"URI Too Long"}' });
    });

    test("header fields over 64 KiB in total: 431 Request Header Fields Too Large", async () => {
      const headers = { authorization: `Bearer ${KEY}`, "x-a": "a".repeat(MAX_HEADER_BYTES / 2), "x-b": "b".repeat(MAX_HEADER_BYTES / 2) };
      expect(await answer(get(`${PATH}?month_from=2024-01-01&month_to=2024-01-31`, headers))).toEqual({
        status: 431,
        type: "application/json",
        body: '{"detail":"Request Header Fields Too Large"}',
      });
    });

    test("an Authorization value of 60 KiB is just a wrong key", async () => {
      expect(await answer(get(`${PATH}?month_from=2024-01-01&month_to=2024-01-31`, { authorization: "Bearer " + "k".repeat(60_000) }))).toEqual({
        status: 401,
        type: "application/json",
        body: '{"detail":"INVALID_API_KEY"}',
      });
    });

    test("a one-letter Host still routes to the endpoint", async () => {
      const res = await app.handle(new Request(`http://x${PATH}?month_from=2024-01-01&month_to=2024-01-31`, { headers: { authorization: `Bearer ${KEY}` } }));
      expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL });
    });
  });
});
