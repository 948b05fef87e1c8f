// GET /external/v1/product-costs with Accept: application/vnd.apache.arrow.stream (issue 55,
// part 1), against a real database: the same rows, in the same order, as the JSON, with ids as
// int64 and amounts as decimal128(38, 6) exact to the last digit (sums past 2^53 and past 20
// digits, negatives); a record batch per batch read; its own ETag, 304, cache and compression.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { gunzipSync } from "node:zlib";
import { tableFromIPC, type Table } from "apache-arrow";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const COSTS = "/external/v1/product-costs";
const JAN = `${COSTS}?month_from=2024-01-01&month_to=2024-01-31&segment=all`;
const ARROW = { authorization: `Bearer ${KEY}`, accept: "application/vnd.apache.arrow.stream" };
const AMOUNTS = ["purchase_cost_usd", "inbound_freight_usd", "shipping_to_customer_usd", "warehouse_fees_usd"];

// Beside the shared fixture: sums a double cannot hold, and their negatives, in 2030.
const EXTREMES = [
  { product_id: 20, erp_product_id: "-9223372036854775808", erp_sku: "SKU-MIN", product_name: "名前 (min id)" },
  { product_id: 21, erp_product_id: "9007199254740993", erp_sku: "SKU-2^53+1", product_name: "" },
];
const days = (n: number) => Array.from({ length: n }, (_, i) => `2030-01-${String(i + 1).padStart(2, "0")}`);
const EXTREME_DAILY = [
  ...days(30).map((cost_date) => ({ product_id: 20, cost_date, purchase_cost_usd: "99999999999999.999999", inbound_freight_usd: "-99999999999999.999999", shipping_to_customer_usd: "0.000001", warehouse_fees_usd: "-0.000001" })),
  ...days(3).map((cost_date) => ({ product_id: 21, cost_date, purchase_cost_usd: "0", inbound_freight_usd: "12345678901234.5", shipping_to_customer_usd: null, warehouse_fees_usd: "-1" })),
];

/** A decimal's text as its unscaled integer at scale 6, read without a float ("-12.5" → -12500000n). */
function unscaled(text: string): bigint {
  const [whole, fraction = ""] = text.split(".");
  return BigInt(whole! + fraction.padEnd(6, "0"));
}

/** The JSON answer's rows, each cell as text: ids and amounts as their own digits, never a JS number. */
function jsonCells(body: string): (string | null)[][] {
  if (body === "[]") return [];
  return body
    .slice(1, -1)
    .split(/(?<=\}),(?=\{)/)
    .map((row) => [...row.matchAll(/":(null|-?[\d.]+|"(?:[^"\\]|\\.)*")/g)].map((m) => (m[1] === "null" ? null : m[1]!.startsWith('"') ? JSON.parse(m[1]!) : m[1]!)));
}

/** The Arrow answer's rows, each cell as the JSON's: ids as digits, amounts read from their four 32-bit words. */
function arrowCells(table: Table): (string | bigint | null)[][] {
  const columns = table.schema.fields.map((f) => table.getChild(f.name)!);
  const rows: (string | bigint | null)[][] = [];
  for (let r = 0; r < table.numRows; r++) {
    rows.push(
      columns.map((column, c) => {
        if (!column.isValid(r)) return null;
        if (c === 0) return String(column.get(r));
        if (c <= 2) return column.get(r) as string;
        // The decimal's words, little-endian two's complement, from the chunk that holds row r.
        let at = r;
        const chunk = column.data.find((d) => (at < d.length ? true : ((at -= d.length), false)))!;
        const words = chunk.values as Uint32Array;
        let value = 0n;
        for (let w = 3; w >= 0; w--) value = (value << 32n) | BigInt(words[(chunk.offset + at) * 4 + w]!);
        return BigInt.asIntN(128, value);
      }),
    );
  }
  return rows;
}

/** The JSON cells with each amount as its unscaled integer, to compare with arrowCells. */
const asArrow = (rows: (string | null)[][]) => rows.map((row) => row.map((cell, c) => (c >= 3 && cell !== null ? unscaled(cell) : cell)));

describeBackends("Arrow IPC stream answers on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, [...PRODUCTS, ...EXTREMES], [...DAILY, ...EXTREME_DAILY]);
    await refreshRollup(db.admin);
    app = testApp(db.service, { answerCache: createAnswerCache(16 * 2 ** 20), batchSize: 2 });
  });
  afterAll(async () => {
    await db.close();
  });

  const arrowOf = async (path: string, headers: Record<string, string> = {}) => {
    const res = await app.get(path, { ...ARROW, ...headers });
    return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  test("the schema: int64 ids, utf8 texts, decimal128(38, 6) amounts, every field nullable, in the JSON's order", async () => {
    const { res, bytes } = await arrowOf(JAN);
    expect(res.status).toBe(200);
    const table = tableFromIPC(bytes);
    expect(table.schema.fields.map((f) => [f.name, String(f.type), f.nullable])).toEqual([
      ["erp_product_id", "Int64", true],
      ["erp_sku", "Utf8", true],
      ["product_name", "Utf8", true],
      ...AMOUNTS.map((name) => [name, "Decimal[38e+6]", true]),
    ]);
    const amount = table.schema.fields[3]!.type as { scale: number; precision: number; bitWidth: number };
    expect([amount.scale, amount.precision, amount.bitWidth]).toEqual([6, 38, 128]);
  });

  describe.each([
    ["a calendar month (JSON's rendered answer)", JAN],
    ["a computed range", `${COSTS}?month_from=2024-01-02&month_to=2024-01-30&segment=all`],
    ["sums past 2^53 and past 20 digits, and their negatives", `${COSTS}?month_from=2030-01-01&month_to=2030-01-31&segment=all`],
    ["the normal segment", `${COSTS}?month_from=2023-12-01&month_to=2024-02-29`],
  ])("%s", (_, path) => {
    test("the same rows as the JSON, in its order, cell for cell, null for null, exact to the last digit", async () => {
      const json = await (await app.get(path)).text();
      const table = tableFromIPC((await arrowOf(path)).bytes);
      expect(table.numRows).toBeGreaterThan(0);
      expect(arrowCells(table)).toEqual(asArrow(jsonCells(json)));
    });
  });

  test("the extremes, spelled out: 2^63 below zero, 2^53 + 1, 30 days of the largest amount and of its negative", async () => {
    const table = tableFromIPC((await arrowOf(`${COSTS}?month_from=2030-01-01&month_to=2030-01-31`)).bytes);
    expect(arrowCells(table)).toEqual([
      ["9007199254740993", "SKU-2^53+1", "", 0n, 37037036703703500000n, null, -3000000n],
      ["-9223372036854775808", "SKU-MIN", "名前 (min id)", 2999999999999999999970n, -2999999999999999999970n, 30n, -30n],
    ]);
  });

  test("a record batch per batch of rows read: memory bounded as the JSON's", async () => {
    const table = tableFromIPC((await arrowOf(JAN)).bytes);
    // batchSize 2 and 7 rows: 4 batches.
    expect(table.batches.map((b) => b.numRows)).toEqual([2, 2, 2, 1]);
  });

  test("a range without rows is the schema and the end of the stream alone", async () => {
    const { res, bytes } = await arrowOf(`${COSTS}?month_from=2040-01-01&month_to=2040-01-31`);
    expect(res.status).toBe(200);
    expect([tableFromIPC(bytes).schema.fields.length, tableFromIPC(bytes).numRows]).toEqual([7, 0]);
    // The schema message (its continuation token, its length, itself), then at once the end-of-stream marker.
    const schemaLength = Buffer.from(bytes).readInt32LE(4);
    expect([bytes.length, ...bytes.slice(8 + schemaLength)]).toEqual([8 + schemaLength + 8, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  });

  test("its headers: the type, a .arrows file name, Vary, an ETag of its own; If-None-Match gives a 304", async () => {
    const { res } = await arrowOf(JAN);
    expect([res.headers.get("content-type"), res.headers.get("content-disposition"), res.headers.get("vary")]).toEqual([
      "application/vnd.apache.arrow.stream",
      'attachment; filename="product-costs_2024-01-01_2024-01-31_all.arrows"',
      "Accept, Accept-Encoding",
    ]);
    const tag = res.headers.get("etag")!;
    expect(tag).toMatch(/^"[A-Za-z0-9_-]{22}-arrow"$/);
    const json = await app.get(JAN);
    await json.arrayBuffer();
    expect(json.headers.get("etag")).not.toBe(tag);
    const again = await app.get(JAN, { ...ARROW, "if-none-match": tag });
    expect([again.status, await again.text(), again.headers.get("etag")]).toEqual([304, "", tag]);
    // The JSON's tag does not stand for the Arrow answer.
    const other = await app.get(JAN, { ...ARROW, "if-none-match": json.headers.get("etag")! });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  test("kept by the answer cache as the other formats are: the repeat is the same bytes, from the cache", async () => {
    const path = `${COSTS}?month_from=2024-01-03&month_to=2024-01-29&segment=all`;
    const first = await arrowOf(path, { "x-request-id": "arrow-first" });
    const second = await arrowOf(path, { "x-request-id": "arrow-second" });
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true);
    const line = (id: string) => app.logs.find((l) => l.request_id === id);
    expect([line("arrow-first")?.format, line("arrow-first")?.kept, line("arrow-second")?.source]).toEqual(["arrow", true, "kept"]);
  });

  test("gzip as asked: the stream decompresses to the identity bytes", async () => {
    const path = `${COSTS}?month_from=2023-12-01&month_to=2024-02-29&segment=all`;
    const plain = (await arrowOf(path)).bytes;
    const res = await app.get(path, { ...ARROW, "accept-encoding": "gzip" });
    const body = new Uint8Array(await res.arrayBuffer());
    if (res.headers.get("content-encoding") === "gzip") expect(Buffer.from(gunzipSync(body)).equals(Buffer.from(plain))).toBe(true);
    else expect(Buffer.from(body).equals(Buffer.from(plain))).toBe(true);
    expect(res.headers.get("etag")).toMatch(res.headers.get("content-encoding") === "gzip" ? /-arrow-gzip"$/ : /-arrow"$/);
  });

  test("an Accept of a format the service does not write gets JSON, as the original answered every Accept", async () => {
    for (const accept of ["application/vnd.apache.arrow.file", "application/vnd.apache.parquet", "application/x-ndjson", "application/xml"]) {
      const res = await app.get(JAN, { authorization: `Bearer ${KEY}`, accept });
      expect([accept, res.status, res.headers.get("content-type")]).toEqual([accept, 200, "application/json"]);
      await res.arrayBuffer();
    }
  });

  test("errors stay JSON with an Arrow Accept", async () => {
    const res = await app.get(`${COSTS}?month_from=2024-02-01&month_to=2024-01-01`, ARROW);
    expect([res.status, res.headers.get("content-type"), await res.text()]).toEqual([400, "application/json", '{"detail":"INVALID_MONTH_RANGE"}']);
  });
});
