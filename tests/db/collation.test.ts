// The answer's order is erp_sku in byte order whatever the server's collation: on a database
// created with an ICU en-US collation (case-insensitive first, accents after their letter),
// every read path (one day, the rollup, the daily rows while everything waits, an exact
// period's rendered answer) keeps byte order. The other test databases are C.UTF-8, where a
// dropped `collate "C"` would go unnoticed.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { KEY, testApp } from "../support/app.ts";
import { SERVER_URL } from "../support/database.ts";
import { loadFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";

// Byte order: "A-4" "B-2" "Z9" "a_3" "b-1" "e6" "z8" "é5"; en-US would interleave the cases.
const SKUS = ["b-1", "B-2", "a_3", "A-4", "é5", "e6", "z8", "Z9"];
const BYTE_ORDER = [...SKUS].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

describeWithPostgres("order under another collation", () => {
  const name = `pce_icu_${process.pid}`;
  const url = Object.assign(new URL(SERVER_URL), { pathname: `/${name}` }).toString();
  let server: ReturnType<typeof postgres>;
  let admin: Sql;
  let service: Sql;

  beforeAll(async () => {
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.unsafe(`create database ${name} template template0 locale_provider icu icu_locale 'en-US' locale 'C.UTF-8'`);
    admin = createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-icu" });
    service = createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: true, applicationName: "pce-icu-service" });
    await migrate(admin);
    await loadFixture(
      admin,
      SKUS.map((sku, i) => ({ product_id: i + 1, erp_product_id: 100 + i, erp_sku: sku, product_name: `P${i}` })),
      SKUS.flatMap((_, i) => ["2024-01-01", "2024-01-15", "2024-01-31"].map((cost_date) => ({ product_id: i + 1, cost_date, purchase_cost_usd: "1" }))),
    );
  });
  afterAll(async () => {
    await admin.end({ timeout: 5 });
    await service.end({ timeout: 5 });
    await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.end();
  });

  test("the server really sorts otherwise", async () => {
    const rows = await admin<{ sku: string }[]>`select erp_sku as sku from products order by erp_sku`;
    expect(rows.map((r) => r.sku)).not.toEqual(BYTE_ORDER);
  });

  test("every read path answers in byte order", async () => {
    const app = testApp(service);
    const order = async (from: string, to: string) => {
      const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}`, { authorization: `Bearer ${KEY}` });
      return ((await res.json()) as { erp_sku: string }[]).map((r) => r.erp_sku);
    };
    const ranges: [string, string][] = [["2024-01-15", "2024-01-15"], ["2024-01-02", "2024-01-31"], ["2024-01-01", "2024-01-31"]];
    for (const [from, to] of ranges) expect({ from, to, order: await order(from, to) }).toEqual({ from, to, order: BYTE_ORDER }); // everything waiting
    await refreshRollup(admin);
    for (const [from, to] of ranges) expect({ from, to, order: await order(from, to) }).toEqual({ from, to, order: BYTE_ORDER }); // rollup, rendered month
  });
});
