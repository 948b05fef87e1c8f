// Issue 44: the database as the ETL left it. A database with the contract's two tables and
// nothing else, read by a role that may SELECT them alone, is served from the daily rows: the
// same statuses, rows, order and bytes (JSON, CSV, the Excel variant) as a migrated database
// with the same rows serves from the rollup, and the naive GROUP BY's, over random data of the
// columns' whole domain (far dates, NaN, the largest amounts) and random writes. Its 200s have
// no validator (nothing versions them). The source follows the schema under concurrent readers
// with every answer exact and no 503: `migrate` committing, a rollup table dropped, a grant
// revoked and given back. Checked again without /readyz too, within RECHECK_MS.
//
// Seeded: the seed is printed; replay a failure with SEED=<seed>.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { MIN_COMPRESSED_BYTES } from "../../src/body/body.ts";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate, MIGRATIONS } from "../../src/rollup/migrations.ts";
import { RECHECK_MS } from "../../src/reads/read-source.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { createServiceMetrics } from "../../src/service/service-metrics.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { databaseUrl as urlOf, freshDatabases } from "../support/database.ts";
import { waitUntil } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bulkLoad, loadProducts, prng, randomRange, randomRows, randomWrite, SEGMENTS, type Rng } from "../support/random-writes.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

const SEED = testSeed("daily source test");
const FORMATS = [
  { name: "json", accept: "application/json" },
  { name: "csv", accept: "text/csv" },
  { name: "csv-excel", accept: "text/csv; variant=excel" },
] as const;

describeWithPostgres("reading the daily rows directly (a database as the ETL left it)", () => {
  const CONTRACT = `pce_contract_${process.pid}`;
  const MIGRATED = `pce_contract_migrated_${process.pid}`;
  const READER = `pce_contract_reader_${process.pid}`;
  const pool = (url: string, readOnly: boolean) =>
    createPool({ url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly, applicationName: "pce-daily-source-test" });

  let dropDatabases: () => Promise<void>;
  let contractAdmin: Sql; // the ETL's (the tables' owner)
  let contractReader: Sql; // the service's: SELECT on the two tables alone
  let migratedAdmin: Sql;
  let migratedService: Sql;
  let daily: TestApp;
  let rollup: TestApp;

  beforeAll(async () => {
    dropDatabases = await freshDatabases([CONTRACT, MIGRATED], [READER]);
    contractAdmin = pool(urlOf(CONTRACT), false);
    // The contract's tables as the ETL makes them (migration 0001's statements, no record of it).
    await contractAdmin.unsafe(MIGRATIONS.find((m) => m.version === "0001")!.sql);
    await contractAdmin.unsafe(`grant select on products, product_daily_costs to ${READER}`);
    contractReader = pool(urlOf(CONTRACT, READER), true);
    migratedAdmin = pool(urlOf(MIGRATED), false);
    await migrate(migratedAdmin);
    migratedService = pool(urlOf(MIGRATED), true);
    daily = testApp(contractReader, { build: { version: "daily", commit: "test" } });
    rollup = testApp(migratedService, { build: { version: "daily", commit: "test" } });
  });
  afterAll(async () => {
    for (const sql of [contractReader, contractAdmin, migratedService, migratedAdmin]) await sql?.end({ timeout: 5 });
    await dropDatabases?.();
  });

  async function get(app: TestApp, path: string, headers: Record<string, string> = {}) {
    return await app.get(path, { authorization: `Bearer ${KEY}`, ...headers });
  }
  const pathOf = (from: string, to: string, segment: string) => `/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`;

  /** The same rows in both databases (the same random data). */
  async function loadBoth(r: Rng): Promise<void> {
    for (const sql of [contractAdmin, migratedAdmin]) await sql`truncate product_daily_costs, products`;
    const productsSeed = r.int(0, 1 << 30);
    const rows = randomRows(r, 1500);
    for (const sql of [contractAdmin, migratedAdmin]) {
      await loadProducts(sql, prng(productsSeed));
      await bulkLoad(sql, rows, true);
    }
    await refreshRollup(migratedAdmin);
  }

  test("every range, segment and format: the bytes of the migrated database's rollup and of the GROUP BY, with no validator", async () => {
    const r = prng(SEED);
    await loadBoth(r);
    const ranges: [string, string][] = [
      ["2024-01-01", "2024-01-01"],
      ["2023-12-01", "2024-02-29"],
      ["0001-01-01", "9999-12-31"],
      ["2999-12-31", "9999-12-31"],
      ["0001-01-01", "2024-03-15"],
      ...Array.from({ length: 24 }, () => randomRange(r)),
    ];
    for (const [from, to] of ranges) {
      for (const segment of SEGMENTS) {
        const naive = await naiveAnswer(contractAdmin, from, to, segment);
        for (const format of FORMATS) {
          const fromDaily = await get(daily, pathOf(from, to, segment), { accept: format.accept });
          const fromRollup = await get(rollup, pathOf(from, to, segment), { accept: format.accept });
          const [dailyBody, rollupBody] = [await fromDaily.text(), await fromRollup.text()];
          const where = `${from}..${to} ${segment} ${format.name}`;
          expect({ where, status: fromDaily.status, body: dailyBody }).toEqual({ where, status: fromRollup.status, body: rollupBody });
          if (format.name === "json") expect({ where, body: dailyBody }).toEqual({ where, body: naive });
          // The same headers but the validators the rollup's version gives.
          const headers = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => !["etag", "x-data-changed-at", "x-request-id", "date"].includes(name)));
          expect({ where, headers: headers(fromDaily) }).toEqual({ where, headers: headers(fromRollup) });
          expect([fromDaily.headers.get("etag"), fromDaily.headers.get("x-data-changed-at")]).toEqual([null, null]);
          expect(fromRollup.headers.get("etag")).not.toBeNull();
        }
      }
    }
    expect(daily.logs.filter((l) => l.msg === "request").every((l) => l.source === "daily" && l.status === 200)).toBe(true);
    expect(rollup.logs.filter((l) => l.msg === "request").some((l) => l.source === "daily")).toBe(false);
  }, 120_000);

  test("random writes of the ETL between reads: every answer the GROUP BY's", async () => {
    const r = prng(SEED ^ 0x44);
    await loadBoth(r);
    for (let i = 0; i < 60; i++) {
      const write = await randomWrite(contractAdmin, r, true);
      const [from, to] = randomRange(r);
      const segment = r.pick(SEGMENTS);
      const res = await get(daily, pathOf(from, to, segment));
      expect({ write, from, to, segment, status: res.status, body: await res.text() }).toEqual({
        write,
        from,
        to,
        segment,
        status: 200,
        body: await naiveAnswer(contractAdmin, from, to, segment),
      });
    }
  }, 120_000);

  test("conditional requests: no ETag to match, so never a 304 but for `*`; If-Match with a tag 412; gzip as asked", async () => {
    const path = pathOf("2023-11-01", "2024-05-31", "all");
    const tag = (await get(rollup, path)).headers.get("etag")!;
    const whole = await (await get(daily, path)).text();
    const cases: [Record<string, string>, number, string][] = [
      [{ "if-none-match": tag }, 200, whole],
      [{ "if-none-match": '"anything"' }, 200, whole],
      [{ "if-none-match": "*" }, 304, ""],
      [{ "if-match": tag }, 412, '{"detail":"Precondition Failed"}'],
      [{ "if-match": "*" }, 200, whole],
    ];
    for (const [headers, status, body] of cases) {
      const res = await get(daily, path, headers);
      expect({ headers, status: res.status, body: await res.text(), etag: res.headers.get("etag") }).toEqual({ headers, status, body, etag: null });
    }
    // Compressed as asked, but for an answer under MIN_COMPRESSED_BYTES (the random data may make
    // this range's that small: seed 1620379976 did), which goes out as it is.
    const zipped = await get(daily, path, { "accept-encoding": "gzip" });
    const bytes = new Uint8Array(await zipped.arrayBuffer());
    const small = Buffer.byteLength(whole) < MIN_COMPRESSED_BYTES;
    const unzipped = new TextDecoder().decode(small ? bytes : Bun.gunzipSync(bytes));
    expect([zipped.headers.get("content-encoding"), unzipped]).toEqual([small ? null : "gzip", whole]);
  });

  test("the source follows the schema under concurrent readers: migrate commits, a table dropped, a grant revoked; every answer exact, no 503", async () => {
    const r = prng(SEED ^ 0x77);
    await loadBoth(r);
    const metrics = createServiceMetrics({ version: "t", commit: "t" });
    const app = testApp(contractReader, { metrics });
    const ranges = Array.from({ length: 12 }, () => randomRange(r));
    const expected = new Map<string, string>();
    for (const [from, to] of ranges) for (const segment of SEGMENTS) expected.set(pathOf(from, to, segment), await naiveAnswer(contractAdmin, from, to, segment));
    const paths = [...expected.keys()];

    const wrong: unknown[] = [];
    const seen = { rollup: 0, daily: 0 };
    let reading = true;
    const readers = Array.from({ length: 4 }, async (_, k) => {
      for (let i = k; reading; i += 4) {
        const path = paths[i % paths.length]!;
        const res = await get(app, path);
        const body = await res.text();
        if (res.status === 200 && body === expected.get(path)) seen[res.headers.has("etag") ? "rollup" : "daily"]++;
        else wrong.push({ path, status: res.status, body: body.slice(0, 200) });
      }
    });
    const source = async () => {
      const text = await (await app.get("/metrics", {})).text();
      return text.split("\n").filter((l) => l.startsWith("product_cost_export_read_source{"));
    };
    const readsOf = async (name: "rollup" | "daily") => {
      const before = seen[name];
      await waitUntil(`reads from the ${name}`, () => seen[name] > before + 20);
    };
    const readyz = async () => ((await (await app.get("/readyz", {})).json()) as { source?: string }).source ?? "rollup";
    try {
      await readsOf("daily");
      expect(await source()).toEqual(['product_cost_export_read_source{source="rollup"} 0', 'product_cost_export_read_source{source="daily"} 1']);

      // The owner runs migrate (every migration, one transaction) and the first refresh, while they read.
      await migrate(contractAdmin);
      await refreshRollup(contractAdmin);
      expect(await readyz()).toBe("rollup");
      await readsOf("rollup");
      expect(await source()).toEqual(['product_cost_export_read_source{source="rollup"} 1', 'product_cost_export_read_source{source="daily"} 0']);

      // A rollup table dropped: the next reads meet it gone and answer from the daily rows.
      await contractAdmin`drop table product_cost_answers`;
      await readsOf("daily");
      await migrate(contractAdmin);
      expect(await readyz()).toBe("rollup");
      await readsOf("rollup");

      // SELECT on a rollup table revoked: the daily rows; given back: the rollup.
      await contractAdmin.unsafe(`revoke select on product_cost_months from ${READER}`);
      await readsOf("daily");
      await contractAdmin.unsafe(`grant select on product_cost_months to ${READER}`);
      // No /readyz this time: a request's own check, once the decision is RECHECK_MS old.
      await waitUntil("the rollup again", () => seen.rollup > 0 && app.logs.filter((l) => l.msg === "reading the rollup").length === 3, RECHECK_MS * 3);
      await readsOf("rollup");
    } finally {
      reading = false;
      await Promise.all(readers);
    }
    expect({ wrong }).toEqual({ wrong: [] });
    // Each change of source said once: daily at the first read, then three turns each way.
    const turns = app.logs.filter((l) => l.msg === "reading the daily rows directly" || l.msg === "reading the rollup").map((l) => [l.msg, l.level]);
    expect(turns).toEqual([
      ["reading the daily rows directly", "warn"],
      ["reading the rollup", "info"],
      ["reading the daily rows directly", "warn"],
      ["reading the rollup", "info"],
      ["reading the daily rows directly", "warn"],
      ["reading the rollup", "info"],
    ]);
    expect(app.logs.filter((l) => l.msg === "database not usable")).toEqual([]);
  }, 120_000);
});
