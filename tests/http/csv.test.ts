// GET /external/v1/product-costs with Accept: text/csv, against a real database: the same
// rows as the JSON, as RFC 4180 CSV; JSON stays the default; errors stay JSON.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { parseCsv as readCsv } from "../support/parse-csv.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_ALL, JANUARY_NORMAL, JANUARY_NORMAL_CSV, PRODUCTS } from "./fixture.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const CSV = { authorization: `Bearer ${KEY}`, accept: "text/csv" };
const HEADER = "erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\r\n";

/** Reads the CSV back with the reader `load-csv` uses: an unquoted empty cell is null, "" an empty text. */
function parseCsv(text: string): (string | null)[][] {
  return readCsv(text).map((record) => record.fields.map((f) => (f.value === "" && !f.quoted ? null : f.value)));
}

describeBackends("CSV output on $name", (backend) => {
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

  test("Accept: text/csv returns the rows as CSV with a header line, exact decimals and empty cells for null", async () => {
    const res = await app.get(JAN, CSV);
    expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: JANUARY_NORMAL_CSV });
  });

  test("the CSV answer carries its type, a file name, Vary and the usual headers", async () => {
    const res = await app.get(JAN + "&segment=all", CSV);
    await res.text();
    expect(res.headers.get("content-type")).toBe("text/csv; charset=utf-8");
    expect(res.headers.get("content-disposition")).toBe('attachment; filename="product-costs_2024-01-01_2024-01-31_all.csv"');
    expect(res.headers.get("vary")).toBe("Accept, Accept-Encoding");
    expect(res.headers.get("cache-control")).toBe("private, no-cache");
    expect(res.headers.get("etag")).toMatch(/^"[A-Za-z0-9_-]{22}-csv"$/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  test("CSV and JSON carry the same rows, cell for cell, null for null", async () => {
    const csv = parseCsv(await (await app.get(JAN + "&segment=all", CSV)).text());
    const json = JSON.parse(JANUARY_ALL) as Record<string, unknown>[];
    const header = csv[0]!;
    expect(header).toEqual(Object.keys(json[0]!));
    // Compare as text: the CSV cell must be the JSON number's own digits (19-digit ids included).
    const jsonText = JANUARY_ALL.slice(1, -1).split(/(?<=\}),(?=\{)/);
    const cells = jsonText.map((row) => [...row.matchAll(/":(null|-?[\d.]+|"(?:[^"\\]|\\.)*")/g)].map((m) => (m[1] === "null" ? null : m[1]!.startsWith('"') ? JSON.parse(m[1]!) : m[1]!)));
    expect(csv.slice(1)).toEqual(cells);
  });

  test("a range without rows is the header line alone", async () => {
    const res = await app.get("/external/v1/product-costs?month_from=2030-01-01&month_to=2030-01-31", CSV);
    expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: HEADER });
  });

  test("streams in batches with the same bytes as one batch", async () => {
    const small = testApp(db.service, { batchSize: 2 });
    expect(await (await small.get(JAN, CSV)).text()).toBe(JANUARY_NORMAL_CSV);
  });

  test("text/* ranked above JSON answers CSV (RFC 9110 §12.5.1: text/csv takes the q of the most specific range naming it)", async () => {
    const res = await app.get(JAN, { authorization: `Bearer ${KEY}`, accept: "text/*;q=0.9, application/json;q=0.5" });
    expect({ status: res.status, type: res.headers.get("content-type"), body: await res.text() }).toEqual({
      status: 200,
      type: "text/csv; charset=utf-8",
      body: JANUARY_NORMAL_CSV,
    });
  });

  test("JSON stays the default: no Accept, */*, a browser's Accept, a tie with application/json, */* alone above it", async () => {
    for (const accept of [undefined, "*/*", "text/html,application/xhtml+xml,*/*;q=0.8", "text/csv, application/json", "text/*, */*", "application/json;q=0.5, */*"]) {
      const headers: Record<string, string> = { authorization: `Bearer ${KEY}` };
      if (accept) headers.accept = accept;
      const res = await app.get(JAN, headers);
      expect({ type: res.headers.get("content-type"), vary: res.headers.get("vary"), body: await res.text() }).toEqual({
        type: "application/json",
        vary: "Accept, Accept-Encoding",
        body: JANUARY_NORMAL,
      });
    }
  });

  test("errors stay JSON when CSV is asked for", async () => {
    const cases: [string, Record<string, string>, number, string][] = [
      [JAN, { accept: "text/csv" }, 401, '{"detail":"INVALID_API_KEY"}'],
      ["/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", CSV, 400, '{"detail":"INVALID_MONTH_RANGE"}'],
      [
        "/external/v1/product-costs?month_to=2024-01-01",
        CSV,
        422,
        '{"detail":[{"type":"missing","loc":["query","month_from"],"msg":"Field required","input":null}]}',
      ],
    ];
    for (const [path, headers, status, body] of cases) {
      const res = await app.get(path, headers);
      expect({ status: res.status, type: res.headers.get("content-type"), body: await res.text() }).toEqual({ status, type: "application/json", body });
    }
  });
});
