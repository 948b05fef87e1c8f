// GET /external/v1/product-costs against a real database: rows, sums, order, headers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { waitUntil } from "../support/faults.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY, JANUARY_ALL, JANUARY_NORMAL, JANUARY_SAMPLE, PRODUCTS } from "./fixture.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";

describeBackends("product costs on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    app = testApp(db.service);
  });
  afterAll(async () => {
    await db.close();
  });

  const text = async (path: string) => {
    const res = await app.get(path);
    return { status: res.status, body: await res.text() };
  };

  test("returns the rows of the range with exact sums, null vs 0, in sku order, normal segment by default", async () => {
    expect(await text(JAN)).toEqual({ status: 200, body: JANUARY_NORMAL });
  });

  test("segment=normal equals the default", async () => {
    expect(await text(JAN + "&segment=normal")).toEqual({ status: 200, body: JANUARY_NORMAL });
  });

  test("segment=sample returns only sample products", async () => {
    expect(await text(JAN + "&segment=sample")).toEqual({ status: 200, body: JANUARY_SAMPLE });
  });

  test("segment=all returns both, sample rows in their sku place", async () => {
    expect(await text(JAN + "&segment=all")).toEqual({ status: 200, body: JANUARY_ALL });
  });

  test("includes both boundary dates: a one-day range on the last day", async () => {
    const r = await text("/external/v1/product-costs?month_from=2024-01-31&month_to=2024-01-31");
    expect(r).toEqual({
      status: 200,
      body: '[{"erp_product_id":1001,"erp_sku":"SKU-B","product_name":"Bravo","purchase_cost_usd":0.25,"inbound_freight_usd":0,"shipping_to_customer_usd":null,"warehouse_fees_usd":0.000001}]',
    });
  });

  test("a one-day range on the first day", async () => {
    const r = await text("/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-01");
    expect(r).toEqual({
      status: 200,
      body: '[{"erp_product_id":1001,"erp_sku":"SKU-B","product_name":"Bravo","purchase_cost_usd":10.5,"inbound_freight_usd":0,"shipping_to_customer_usd":null,"warehouse_fees_usd":1.25}]',
    });
  });

  test("a range just outside the data returns an empty array", async () => {
    expect(await text("/external/v1/product-costs?month_from=2025-01-01&month_to=2025-12-31")).toEqual({ status: 200, body: "[]" });
  });

  test("a product whose only rows lie outside the range is not returned", async () => {
    const r = await text("/external/v1/product-costs?month_from=2024-02-15&month_to=2024-03-01");
    expect(r.body).toBe(
      '[{"erp_product_id":1006,"erp_sku":"SKU-D","product_name":"Outside the range","purchase_cost_usd":1,"inbound_freight_usd":1,"shipping_to_customer_usd":1,"warehouse_fees_usd":1}]',
    );
  });

  test("sums across the range boundary days only", async () => {
    const r = await text("/external/v1/product-costs?month_from=2023-12-31&month_to=2024-02-01&segment=all");
    const row = JSON.parse(r.body).find((x: { erp_sku: string }) => x.erp_sku === "SKU-B");
    expect(row).toEqual({
      erp_product_id: 1001, erp_sku: "SKU-B", product_name: "Bravo",
      purchase_cost_usd: 2010.75, inbound_freight_usd: 2000, shipping_to_customer_usd: 2000, warehouse_fees_usd: 2001.250001,
    });
  });

  test("alternative date forms Pydantic accepts give the same rows", async () => {
    for (const [from, to] of [
      ["1704067200", "1706659200"], // unix seconds of 2024-01-01 and 2024-01-31
      ["2024-01-01T00:00:00", "2024-01-31T00:00:00Z"],
      ["2024-01-01T00:00:00%2B09:00", "2024-01-31 00:00:00"],
    ]) {
      expect(await text(`/external/v1/product-costs?month_from=${from}&month_to=${to}`)).toEqual({ status: 200, body: JANUARY_NORMAL });
    }
  });

  test("the last value of a repeated parameter wins, the first may be invalid", async () => {
    expect(await text(JAN + "&segment=foo&segment=sample")).toEqual({ status: 200, body: JANUARY_SAMPLE });
    const r = await text("/external/v1/product-costs?month_from=bad&month_from=2024-01-31&month_to=2024-01-31");
    expect(r.body).toBe("[" + JANUARY[1]!.replace("10.75", "0.25").replace("1.250001", "0.000001") + "]");
  });

  test("unknown parameters are ignored", async () => {
    expect(await text(JAN + "&limit=1&month=2&Segment=sample")).toEqual({ status: 200, body: JANUARY_NORMAL });
  });

  test("percent-encoded parameter names and values are decoded", async () => {
    expect(await text("/external/v1/product-costs?month%5Ffrom=2024%2D01%2D01&month_to=2024-01-31&segment=%73ample")).toEqual({
      status: 200,
      body: JANUARY_SAMPLE,
    });
  });

  test("200 carries the documented headers and a generated request id", async () => {
    const res = await app.get(JAN);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    // Kept by the client, asked again before use (a 304 when unchanged: conditional.test.ts).
    expect(res.headers.get("cache-control")).toBe("private, no-cache");
    expect(res.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{22}-json"$/);
    expect(res.headers.get("x-data-changed-at")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await res.text();
  });

  test("a sane X-Request-Id is echoed, an unsafe one replaced", async () => {
    const ok = await app.get(JAN, { authorization: `Bearer ${KEY}`, "x-request-id": "abc-123" });
    expect(ok.headers.get("x-request-id")).toBe("abc-123");
    await ok.text();
    const bad = await app.get(JAN, { authorization: `Bearer ${KEY}`, "x-request-id": "a b\"c" });
    expect(bad.headers.get("x-request-id")).not.toBe('a b"c');
    await bad.text();
  });

  test("streams in batches with the same bytes as one batch", async () => {
    const small = testApp(db.service, { batchSize: 2 });
    const res = await small.get(JAN + "&segment=all");
    expect(await res.text()).toBe(JANUARY_ALL);
    const one = testApp(db.service, { batchSize: 1 });
    expect(await (await one.get(JAN)).text()).toBe(JANUARY_NORMAL);
  });

  test("logs one line per request with rows and the key fingerprint, never the key", async () => {
    const local = testApp(db.service);
    await (await local.get(JAN, { authorization: `Bearer ${KEY}`, "x-request-id": "log-test-1" })).text();
    await waitUntil("the request is logged", () => local.logs.some((l) => l.request_id === "log-test-1"));
    const line = local.logs.find((l) => l.request_id === "log-test-1");
    expect(line).toMatchObject({
      level: "info", msg: "request", method: "GET", path: "/external/v1/product-costs", status: 200, rows: 6,
    });
    expect(line!.key).toMatch(/^[0-9a-f]{8}$/);
    expect(typeof line!.duration_ms).toBe("number");
    expect(JSON.stringify(local.logs)).not.toContain(KEY);
  });

  test("the body is the documented seven-field rows", async () => {
    const rows = JSON.parse((await text(JAN + "&segment=all")).body) as Record<string, unknown>[];
    expect(rows.length).toBe(7);
    for (const row of rows) {
      expect(Object.keys(row)).toEqual([
        "erp_product_id", "erp_sku", "product_name", "purchase_cost_usd", "inbound_freight_usd",
        "shipping_to_customer_usd", "warehouse_fees_usd",
      ]);
    }
    // Not costed at all is four explicit nulls in the answer itself (product 2, SKU-A).
    expect(rows.find((r) => r.erp_sku === "SKU-A")).toEqual({
      erp_product_id: 1002,
      erp_sku: "SKU-A",
      product_name: "Alpha",
      purchase_cost_usd: null,
      inbound_freight_usd: null,
      shipping_to_customer_usd: null,
      warehouse_fees_usd: null,
    });
  });
});
