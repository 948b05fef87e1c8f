// Issue 52, item 3: an ETL's schema change under readers. A read that PostgreSQL stops while it
// waits for a lock (a deadlock's victim, 40P01; past a lock_timeout, 55P03) is read once more,
// as a recovery conflict is; when it meets the conflict again the client gets a clean 503 with
// Retry-After, and the log line names LOCK_CONFLICT. It was a 500. A database of its own: the
// ETL here alters the contract's tables.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { databaseUrl, freshDatabases } from "../support/database.ts";
import { waitForLocks } from "../support/interleave.ts";
import { loadDenseFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("lock conflicts of an ETL's schema change under readers", () => {
  const NAME = `pce_locks_${process.pid}`;
  const READER = `pce-locks-reader-${process.pid}`;
  const RANGE = "month_from=2026-01-10&month_to=2026-03-05";
  let dropDatabase: () => Promise<void>;
  let url: string;
  let admin: Sql;
  let etl: Sql;
  let reader: Sql;
  let app: TestApp;
  let expected: string;

  beforeAll(async () => {
    dropDatabase = await freshDatabases([NAME]);
    url = databaseUrl(NAME);
    const writable = (name: string) => createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: false, applicationName: name });
    admin = writable("pce-locks-admin");
    etl = writable(`pce-locks-etl-${process.pid}`);
    await migrate(admin);
    await loadDenseFixture(admin, { products: 20, from: "2026-01-01", to: "2026-03-31" });
    await refreshRollup(admin, { rebuild: true });
    reader = createPool({ url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: true, applicationName: READER });
    app = testApp(reader);
    expected = await (await app.get(`/external/v1/product-costs?${RANGE}`)).text();
    expect(JSON.parse(expected).length).toBe(20);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([admin, etl, reader].map((p) => p.end({ timeout: 2 })));
    await dropDatabase();
  });

  const requestLines = () => app.logs.filter((l) => l.msg === "request");

  test("ALTER TABLE products, then product_daily_costs, in one transaction: the reads wait for it, none is a deadlock's victim, every answer exact", async () => {
    // The ETL. The read took product_daily_costs first and waited for products: a
    // deadlock, and the read its victim (500). Reads now take products first, as this ETL does.
    const seen = requestLines().length;
    const reserved = await etl.reserve();
    try {
      await reserved.unsafe("begin; alter table products add column etl_note_a text");
      const reads = Array.from({ length: 4 }, () => app.get(`/external/v1/product-costs?${RANGE}`).then(async (r) => ({ status: r.status, body: await r.text() })));
      await waitForLocks(admin, READER, 1);
      await reserved.unsafe("alter table product_daily_costs add column etl_note_b text");
      await reserved.unsafe("commit");
      expect(await Promise.all(reads)).toEqual(Array.from({ length: 4 }, () => ({ status: 200, body: expected })));
      expect(requestLines().slice(seen).map((l) => l.retried_after)).toEqual([undefined, undefined, undefined, undefined]);
    } finally {
      reserved.release();
    }
  }, 30_000);

  test("the other order, product_daily_costs then products: the read chosen as the deadlock's victim is read once more, exact, its line naming 40P01", async () => {
    const seen = requestLines().length;
    const reserved = await etl.reserve();
    try {
      await reserved.unsafe("begin; lock table product_daily_costs in access exclusive mode");
      const read = app.get(`/external/v1/product-costs?${RANGE}`).then(async (r) => ({ status: r.status, body: await r.text() }));
      // The read holds products and waits for product_daily_costs; the ETL then asks for
      // products. The read waited first, so its deadlock check runs first: it is the victim.
      await waitForLocks(admin, READER, 1);
      await reserved.unsafe("lock table products in access exclusive mode");
      await reserved.unsafe("commit");
      expect(await read).toEqual({ status: 200, body: expected });
      expect(requestLines().slice(seen).map((l) => ({ status: l.status, retried_after: l.retried_after }))).toEqual([{ status: 200, retried_after: "40P01" }]);
    } finally {
      reserved.release();
    }
  }, 30_000);

  test("past the role's lock_timeout twice: 503 DATABASE_UNAVAILABLE with Retry-After, the line naming LOCK_CONFLICT and its fix", async () => {
    const impatient = createPool({ url: `${url}?options=${encodeURIComponent("-c lock_timeout=200")}`, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: true, applicationName: READER });
    const impatientApp = testApp(impatient);
    const reserved = await etl.reserve();
    try {
      await reserved.unsafe("begin; lock table products in access exclusive mode");
      const res = await impatientApp.get(`/external/v1/product-costs?${RANGE}`);
      expect({ status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.text() }).toEqual({ status: 503, retryAfter: "5", body: '{"detail":"DATABASE_UNAVAILABLE"}' });
      const line = impatientApp.logs.find((l) => l.msg === "request")!;
      expect({ status: line.status, problem: line.problem, error_code: line.error_code }).toEqual({ status: 503, problem: "LOCK_CONFLICT", error_code: "55P03" });
      expect(String(line.fix)).toContain("products, then product_daily_costs");
      await reserved.unsafe("rollback");
      const again = await impatientApp.get(`/external/v1/product-costs?${RANGE}`);
      expect({ status: again.status, body: await again.text() }).toEqual({ status: 200, body: expected });
    } finally {
      reserved.release();
      await impatient.end({ timeout: 2 });
    }
  }, 30_000);
});
