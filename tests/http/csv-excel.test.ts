// The Excel-safe CSV (issue 31, item 14), against a real database: `Accept: text/csv;
// variant=excel` gets a UTF-8 byte order mark (so Excel reads non-ASCII names right) and
// every text cell that a spreadsheet would run as a formula (a leading =, +, -, @, tab or
// CR: OWASP's "CSV injection") written as a quoted text starting with a single quote. The
// plain text/csv stays byte for byte what it was. The variant has its own ETag, cache entry
// and file name, and says what it is in its Content-Type.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";

const PRODUCTS = [
  { product_id: 1, erp_product_id: 1, erp_sku: "S1", product_name: '=HYPERLINK("http://evil.example","Click")' },
  { product_id: 2, erp_product_id: 2, erp_sku: "S2", product_name: "+1+2" },
  { product_id: 3, erp_product_id: 3, erp_sku: "S3", product_name: "-2+3" },
  { product_id: 4, erp_product_id: 4, erp_sku: "S4", product_name: "@SUM(A1:A9)" },
  { product_id: 5, erp_product_id: 5, erp_sku: "S5", product_name: "\tTabbed" },
  { product_id: 6, erp_product_id: 6, erp_sku: "S6", product_name: "\rReturn" },
  { product_id: 7, erp_product_id: 7, erp_sku: "S7", product_name: "Zürich, Ørsted & Åre" },
  { product_id: 8, erp_product_id: 8, erp_sku: "S8", product_name: "" },
  { product_id: 9, erp_product_id: 9, erp_sku: "S9", product_name: null },
  { product_id: 10, erp_product_id: 10, erp_sku: "-S10", product_name: "a = b" },
];
const DAILY = PRODUCTS.map((p) => ({
  product_id: p.product_id,
  cost_date: "2024-01-10",
  purchase_cost_usd: p.product_id === 3 ? "-2.5" : "1.5",
  inbound_freight_usd: null,
  shipping_to_customer_usd: null,
  warehouse_fees_usd: null,
}));

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const HEADER = "erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\r\n";
const EXCEL = "text/csv; variant=excel";
const BOM = "\uFEFF";
// Response.text() drops a leading BOM: read the bytes as they came.
const text = async (r: Response) => new TextDecoder("utf-8", { ignoreBOM: true }).decode(await r.arrayBuffer());

/** What every CSV client got before, and still gets. */
const PLAIN =
  HEADER +
  "10,-S10,a = b,1.5,,,\r\n" +
  '1,S1,"=HYPERLINK(""http://evil.example"",""Click"")",1.5,,,\r\n' +
  "2,S2,+1+2,1.5,,,\r\n" +
  "3,S3,-2+3,-2.5,,,\r\n" +
  "4,S4,@SUM(A1:A9),1.5,,,\r\n" +
  "5,S5,\tTabbed,1.5,,,\r\n" +
  '6,S6,"\rReturn",1.5,,,\r\n' +
  '7,S7,"Zürich, Ørsted & Åre",1.5,,,\r\n' +
  '8,S8,"",1.5,,,\r\n' +
  "9,S9,,1.5,,,\r\n";

/** The same rows for a spreadsheet: a BOM, formula-leading text cells quoted behind a single quote; numbers as they are. */
const FOR_EXCEL =
  BOM +
  HEADER +
  `10,"'-S10",a = b,1.5,,,\r\n` +
  `1,S1,"'=HYPERLINK(""http://evil.example"",""Click"")",1.5,,,\r\n` +
  `2,S2,"'+1+2",1.5,,,\r\n` +
  `3,S3,"'-2+3",-2.5,,,\r\n` +
  `4,S4,"'@SUM(A1:A9)",1.5,,,\r\n` +
  `5,S5,"'\tTabbed",1.5,,,\r\n` +
  `6,S6,"'\rReturn",1.5,,,\r\n` +
  '7,S7,"Zürich, Ørsted & Åre",1.5,,,\r\n' +
  '8,S8,"",1.5,,,\r\n' +
  "9,S9,,1.5,,,\r\n";

describeBackends("Excel-safe CSV on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  const get = (accept: string, extra: Record<string, string> = {}, on = app) => on.get(JAN, { authorization: `Bearer ${KEY}`, accept, ...extra });
  const answer = async (res: Promise<Response>) => {
    const r = await res;
    return {
      status: r.status,
      type: r.headers.get("content-type"),
      disposition: r.headers.get("content-disposition"),
      vary: r.headers.get("vary"),
      body: await text(r),
    };
  };

  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    app = testApp(db.service);
  });
  afterAll(async () => {
    await db.close();
  });

  test("text/csv is unchanged: formula-leading names as they are, no BOM", async () => {
    expect(await answer(get("text/csv"))).toEqual({
      status: 200,
      type: "text/csv; charset=utf-8",
      disposition: 'attachment; filename="product-costs_2024-01-01_2024-01-31_normal.csv"',
      vary: "Accept, Accept-Encoding",
      body: PLAIN,
    });
  });

  test("text/csv; variant=excel: a BOM, each formula-leading text cell quoted behind a single quote, its own type and file name", async () => {
    const bytes = new Uint8Array(await (await get(EXCEL)).arrayBuffer());
    expect([...bytes.subarray(0, 3)]).toEqual([0xef, 0xbb, 0xbf]);
    expect(await answer(get(EXCEL))).toEqual({
      status: 200,
      type: "text/csv; charset=utf-8; variant=excel",
      disposition: 'attachment; filename="product-costs_2024-01-01_2024-01-31_normal_excel.csv"',
      vary: "Accept, Accept-Encoding",
      body: FOR_EXCEL,
    });
  });

  test("the variant is asked for in any case, quoted or not, and ranked like text/csv", async () => {
    for (const accept of ["text/csv;variant=excel", 'text/csv; variant="excel"', "TEXT/CSV; VARIANT=Excel", "text/csv;variant=excel;q=0.9, application/json;q=0.5", "application/json;q=0.1, text/csv; charset=utf-8; variant=excel"]) {
      expect({ accept, ...(await answer(get(accept))) }).toMatchObject({ accept, status: 200, body: FOR_EXCEL });
    }
    for (const accept of ["text/csv;variant=other", "text/csv;variant=excel;q=0, text/csv", "text/csv;variant=excel;q=0.5, text/csv"]) {
      expect({ accept, ...(await answer(get(accept))) }).toMatchObject({ accept, status: 200, body: PLAIN });
    }
    // A tie with JSON is JSON, as for plain CSV.
    expect((await answer(get("text/csv;variant=excel, application/json"))).type).toBe("application/json");
  });

  test("its own ETag: a validator of the plain CSV does not answer 304 for the variant, its own does", async () => {
    const plain = (await get("text/csv")).headers.get("etag")!;
    const excel = (await get(EXCEL)).headers.get("etag")!;
    expect(plain).toMatch(/^"[A-Za-z0-9_-]{22}-csv"$/);
    expect(excel).toBe(plain.replace(/-csv"$/, '-csv-excel"'));
    expect((await get(EXCEL, { "if-none-match": plain })).status).toBe(200);
    expect((await get(EXCEL, { "if-none-match": excel })).status).toBe(304);
  });

  test("its own cache entry and batches: the same bytes from the answer cache and in batches of 2", async () => {
    const cached = testApp(db.service, { answerCache: createAnswerCache(2 ** 20) });
    expect((await answer(get("text/csv", {}, cached))).body).toBe(PLAIN);
    expect((await answer(get(EXCEL, {}, cached))).body).toBe(FOR_EXCEL);
    expect((await answer(get(EXCEL, {}, cached))).body).toBe(FOR_EXCEL);
    expect((await answer(get("text/csv", {}, cached))).body).toBe(PLAIN);
    const small = testApp(db.service, { batchSize: 2 });
    expect((await answer(get(EXCEL, {}, small))).body).toBe(FOR_EXCEL);
  });

  test("a range without rows is the BOM and the header line", async () => {
    const res = await app.get("/external/v1/product-costs?month_from=2030-01-01&month_to=2030-01-31", { authorization: `Bearer ${KEY}`, accept: EXCEL });
    expect({ status: res.status, body: await text(res) }).toEqual({ status: 200, body: BOM + HEADER });
  });
});
