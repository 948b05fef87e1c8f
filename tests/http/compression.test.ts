// Response compression: br or gzip for a 200 big enough to gain, when Accept-Encoding allows
// it; the decoded bytes are exactly the uncompressed answer; identity otherwise; error bodies
// never compressed; a failure midway still breaks the transfer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import zlib from "node:zlib";
import { sendOk } from "../../src/body/body.ts";
import { chooseEncoding } from "../../src/query/answer-key.ts";
import { MIN_COMPRESSED_BYTES } from "../../src/body/body.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { endsChunkedBody, rawExchange, serveOnSocket } from "../support/faults.ts";
import { loadFixture, type DailyCostFixture, type ProductFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";

describe("chooseEncoding reads Accept-Encoding as RFC 9110 says", () => {
  test.each([
    [null, null],
    ["", null],
    ["identity", null],
    ["gzip", "gzip"],
    ["GZIP", "gzip"],
    ["x-gzip", "gzip"],
    ["br", "br"],
    ["gzip, deflate, br, zstd", "br"], // a browser's: br wins the tie
    ["deflate, gzip, br, zstd", "br"], // curl --compressed
    ["gzip;q=0.5, br;q=0.4", "gzip"],
    ["gzip; q=1.0, br; q=0.999", "gzip"],
    ["gzip;q=0", null],
    ["gzip;q=0.000", null],
    ["br;q=0, gzip;q=0", null],
    ["br;q=0, gzip", "gzip"],
    ["*", "br"],
    ["*;q=0", null],
    ["*;q=0, gzip", "gzip"],
    ["br;q=0, *", "gzip"],
    ["*, gzip;q=0", "br"],
    ["deflate", null],
    ["gzip;q=2", null], // not a qvalue: the entry is ignored
    ["gzip;q=abc, br;q=0.1", "br"],
    ["gzip;level=9", null], // not a q parameter: malformed, ignored
    [" gzip ; q=0.3 ,  br ; q=0.2 ", "gzip"],
  ] as const)("%p → %p", (header, expected) => {
    expect(chooseEncoding(header)).toBe(expected);
  });
});

// 150 products with one row each in January 2024 besides the usual fixture: an answer of
// about 25 KB whose first batch is well over the 1 KiB threshold.
const MANY_PRODUCTS: ProductFixture[] = Array.from({ length: 150 }, (_, i) => ({
  product_id: 1000 + i,
  erp_product_id: 50_000 + i,
  erp_sku: `SKU-MANY-${String(i).padStart(4, "0")}`,
  product_name: `Many ${i} "ü"`,
}));
const MANY_DAILY: DailyCostFixture[] = MANY_PRODUCTS.map((p, i) => ({
  product_id: p.product_id,
  cost_date: "2024-01-10",
  purchase_cost_usd: `${i}.${String(i * 7919).padStart(6, "0").slice(-6)}`,
  inbound_freight_usd: i % 5 ? "1.5" : null,
  shipping_to_customer_usd: "0",
  warehouse_fees_usd: "12345678901234.123456",
}));

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const AUTH = { authorization: `Bearer ${KEY}` };

const decode: Record<string, (b: Uint8Array<ArrayBuffer>) => Uint8Array> = {
  gzip: (b) => Bun.gunzipSync(b),
  br: (b) => new Uint8Array(zlib.brotliDecompressSync(b)),
};

describeBackends("compression on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  let plain: Uint8Array;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, [...PRODUCTS, ...MANY_PRODUCTS], [...DAILY, ...MANY_DAILY]);
    app = testApp(db.service, { batchSize: 50 }); // several batches: the stream is compressed across them
    const res = await app.get(JAN);
    expect(res.headers.get("content-encoding")).toBeNull();
    plain = new Uint8Array(await res.arrayBuffer());
    expect(plain.length).toBeGreaterThan(20_000);
  });
  afterAll(async () => {
    await db.close();
  });

  test.each([
    ["gzip", "gzip"],
    ["br", "br"],
    ["gzip, deflate, br, zstd", "br"],
    ["gzip;q=1, br;q=0.5", "gzip"],
  ])("Accept-Encoding: %s → %s, which decodes to exactly the uncompressed bytes", async (acceptEncoding, coding) => {
    const res = await app.get(JAN, { ...AUTH, "accept-encoding": acceptEncoding });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-encoding")).toBe(coding);
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
    expect(res.headers.get("content-type")).toBe("application/json");
    const body = new Uint8Array(await res.arrayBuffer());
    expect(body.length).toBeLessThan(plain.length / 3);
    expect(Buffer.from(decode[coding]!(body)).equals(Buffer.from(plain))).toBe(true);
  });

  test.each([["identity"], ["gzip;q=0"], ["br;q=0, gzip;q=0"], ["*;q=0"], ["deflate"], [""]])(
    "Accept-Encoding: %p → identity, the same bytes, Vary still says Accept-Encoding",
    async (acceptEncoding) => {
      const res = await app.get(JAN, { ...AUTH, "accept-encoding": acceptEncoding });
      expect(res.headers.get("content-encoding")).toBeNull();
      expect(res.headers.get("vary")).toContain("Accept-Encoding");
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(plain))).toBe(true);
    },
  );

  test("no Accept-Encoding header: identity", async () => {
    const res = await app.get(JAN);
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(plain))).toBe(true);
  });

  test("a small answer stays uncompressed even when gzip is accepted", async () => {
    const small = testApp(db.service); // the fixture's own rows for one day: one short row
    const res = await small.get("/external/v1/product-costs?month_from=2024-01-31&month_to=2024-01-31", { ...AUTH, "accept-encoding": "gzip, br" });
    expect(res.headers.get("content-encoding")).toBeNull();
    expect(res.headers.get("vary")).toContain("Accept-Encoding");
    const text = await res.text();
    expect(text.length).toBeLessThan(MIN_COMPRESSED_BYTES);
    expect(JSON.parse(text)).toHaveLength(1);
    const empty = await small.get("/external/v1/product-costs?month_from=2031-01-01&month_to=2031-01-31", { ...AUTH, "accept-encoding": "gzip" });
    expect([empty.headers.get("content-encoding"), await empty.text()]).toEqual([null, "[]"]);
  });

  test("the CSV answer is compressed the same way", async () => {
    const csv = await app.get(JAN, { ...AUTH, accept: "text/csv" });
    const plainCsv = Buffer.from(await csv.arrayBuffer());
    const res = await app.get(JAN, { ...AUTH, accept: "text/csv", "accept-encoding": "gzip" });
    expect(res.headers.get("content-encoding")).toBe("gzip");
    expect(res.headers.get("vary")).toBe("Accept, Accept-Encoding");
    expect(Buffer.from(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer()))).equals(plainCsv)).toBe(true);
  });

  test.each([
    ["401", JAN, { "accept-encoding": "gzip, br" }],
    ["422", "/external/v1/product-costs?month_from=bad", { ...AUTH, "accept-encoding": "gzip, br" }],
    ["400", "/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", { ...AUTH, "accept-encoding": "gzip, br" }],
    ["404", "/nowhere", { ...AUTH, "accept-encoding": "gzip" }],
  ])("a %s is never compressed: the same bytes with or without Accept-Encoding", async (_, path, headers) => {
    const withHeader = await app.get(path, headers as Record<string, string>);
    const { "accept-encoding": _ae, ...without } = headers as Record<string, string>;
    const plainAnswer = await app.get(path, without);
    expect(withHeader.headers.get("content-encoding")).toBeNull();
    expect([withHeader.status, await withHeader.text()]).toEqual([plainAnswer.status, await plainAnswer.text()]);
  });

  test("the rows are still the rows: a compressed January decodes to the fixture's January plus the many", async () => {
    const res = await app.get(JAN, { ...AUTH, "accept-encoding": "gzip" });
    const rows = JSON.parse(new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer()))));
    expect(rows).toHaveLength(JSON.parse(JANUARY_NORMAL).length + MANY_PRODUCTS.length);
  });
});

describe("a failure midway through a compressed answer", () => {
  // A body that sends 64 KiB of JSON-like text and then fails, as the rows do when the
  // database goes away between batches.
  async function failingRows(request: Request): Promise<Response> {
    const chunk = new TextEncoder().encode("[" + '{"erp_sku":"SKU-X","purchase_cost_usd":1.5},'.repeat(400));
    let sent = 0;
    const next = async () => {
      if (sent++ < 8) return chunk;
      throw new Error("the database went away");
    };
    const source = { next, close: async () => {} };
    const wanted = chooseEncoding(request.headers.get("accept-encoding"));
    return (await sendOk({ "content-type": "application/json" }, source, { wanted, signal: new AbortController().signal })).response;
  }

  test.each([["gzip"], ["br"]])("%s: the connection is cut without the last chunk, and what came does not decode as a whole", async (coding) => {
    const server = serveOnSocket((request) => failingRows(request));
    try {
      const client = rawExchange(server.port, `GET / HTTP/1.1\r\nHost: x\r\nAccept-Encoding: ${coding}\r\n\r\n`);
      expect(await client.closed()).toBe(true);
      const raw = Buffer.from(client.received(), "latin1");
      const split = raw.indexOf("\r\n\r\n");
      const head = raw.subarray(0, split).toString("latin1").toLowerCase();
      // De-chunk what arrived.
      const parts: Buffer[] = [];
      let at = split + 4;
      for (;;) {
        const eol = raw.indexOf("\r\n", at);
        if (eol < 0) break;
        const size = parseInt(raw.subarray(at, eol).toString("latin1"), 16);
        if (!(size > 0) || eol + 2 + size > raw.length) break;
        parts.push(raw.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
      let decodes = true;
      try {
        decode[coding]!(new Uint8Array(Buffer.concat(parts)));
      } catch {
        decodes = false;
      }
      expect({
        status: head.split("\r\n")[0],
        encoding: head.includes(`content-encoding: ${coding}`),
        lastChunk: endsChunkedBody(client.received()),
        decodes,
      }).toEqual({ status: "http/1.1 200 ok", encoding: true, lastChunk: false, decodes: false });
    } finally {
      server.stop();
    }
  });
});
