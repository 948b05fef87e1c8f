// ETags, If-None-Match, If-Match, HEAD and the answer cache (docs/api.md, "Caching and conditional
// requests"), on both backends: one tag per representation and state; a 304 only for the
// current state and only after every check a 200 would pass; writes in a range change its
// tag, writes elsewhere and refreshes do not; cached bytes are the uncached bytes and the
// GROUP BY's; identical requests arriving together make one database read.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { createServiceMetrics } from "../../src/service/service-metrics.ts";
import { KEY, testApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { loadFixture } from "../support/fixtures.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const auth = { authorization: `Bearer ${KEY}` };
const BUILD = { version: "1.2.3", commit: "abc" };

describeBackends("conditional reads on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await refreshRollup(db.admin);
  });
  afterAll(async () => {
    await db.close();
  });

  const read = async (app: ReturnType<typeof testApp>, path: string, headers: Record<string, string> = {}) => {
    const res = await app.get(path, { ...auth, "accept-encoding": "identity", ...headers });
    return { status: res.status, etag: res.headers.get("etag"), headers: res.headers, body: new Uint8Array(await res.arrayBuffer()) };
  };
  const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

  test("a 200's ETag names it; If-None-Match with it (or W/ it, or *, or in a list) is a 304 with no body, read without a row", async () => {
    const app = testApp(db.service, { build: BUILD });
    const first = await read(app, JAN);
    expect(first.status).toBe(200);
    expect(first.etag).toMatch(/^"[A-Za-z0-9_-]{22}-json"$/);
    for (const inm of [first.etag!, `W/${first.etag}`, "*", `"nope", ${first.etag}`]) {
      const res = await app.get(JAN, { ...auth, "accept-encoding": "identity", "if-none-match": inm });
      expect({ inm, status: res.status, etag: res.headers.get("etag"), body: await res.text() }).toEqual({ inm, status: 304, etag: first.etag, body: "" });
      expect(res.headers.get("cache-control")).toBe("private, no-cache");
      expect(res.headers.get("vary")).toBe("Accept, Accept-Encoding");
      expect(res.headers.get("x-data-changed-at")).toBe(first.headers.get("x-data-changed-at"));
    }
    const logged = app.logs.filter((l) => l.msg === "request");
    expect(logged.at(-1)).toMatchObject({ status: 304 });
    expect(logged.at(-1)!.first_rows_ms).toBeUndefined(); // no row was read
    expect((await read(app, JAN, { "if-none-match": '"other-json"' })).status).toBe(200);
  });

  test("every check a 200 passes comes first: no key 401, a bad query 422, a reversed range 400, the same bytes as without the header", async () => {
    const app = testApp(db.service, { build: BUILD });
    const { etag } = await read(app, JAN);
    const cases: [string, Record<string, string>, number, string][] = [
      [JAN, {}, 401, '{"detail":"INVALID_API_KEY"}'],
      ["/external/v1/product-costs?month_from=2024-01-01", auth, 422, '{"detail":[{"type":"missing","loc":["query","month_to"],"msg":"Field required","input":null}]}'],
      ["/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", auth, 400, '{"detail":"INVALID_MONTH_RANGE"}'],
    ];
    for (const [path, headers, status, body] of cases) {
      const res = await app.get(path, { ...headers, "if-none-match": etag! });
      expect([res.status, await res.text(), res.headers.get("etag")]).toEqual([status, body, null]);
    }
  });

  test("If-Match that names no current representation is 412 Precondition Failed (RFC 9110 §13.1.1), with the error headers and no row read", async () => {
    const app = testApp(db.service, { build: BUILD });
    const { etag } = await read(app, JAN);
    const reversed = await app.get("/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", auth);
    await reversed.text();
    const errorHeaders = (res: Response) => [...res.headers].filter(([n]) => n !== "x-request-id");
    // Strong comparison: a weak tag never matches; another representation's tag does not either.
    for (const im of ['"nope"', `W/${etag}`, etag!.replace('-json"', '-csv"'), `"nope", W/${etag}`, "nope", ""]) {
      const res = await app.get(JAN, { ...auth, "accept-encoding": "identity", "if-match": im });
      expect({ im, status: res.status, body: await res.text() }).toEqual({ im, status: 412, body: '{"detail":"Precondition Failed"}' });
      expect(errorHeaders(res)).toEqual(errorHeaders(reversed));
    }
    const logged = app.logs.filter((l) => l.msg === "request");
    expect(logged.at(-1)).toMatchObject({ status: 412 });
    expect(logged.at(-1)!.first_rows_ms).toBeUndefined();
    // HEAD: the same status, no body.
    const head = await app.handle(new Request(`http://localhost${JAN}`, { method: "HEAD", headers: { ...auth, "if-match": '"nope"' } }));
    expect(head.status).toBe(412);
  });

  test("If-Match with the current tag, in a list, or *, is answered as without it; it is evaluated before If-None-Match", async () => {
    const app = testApp(db.service, { build: BUILD });
    const plain = await read(app, JAN);
    for (const im of [plain.etag!, `"nope", ${plain.etag}`, "*"]) {
      const res = await read(app, JAN, { "if-match": im });
      expect({ im, status: res.status, etag: res.etag, body: text(res.body) }).toEqual({ im, status: 200, etag: plain.etag, body: text(plain.body) });
    }
    expect((await read(app, JAN, { "if-match": plain.etag!, "if-none-match": plain.etag! })).status).toBe(304);
    const both = await read(app, JAN, { "if-match": '"nope"', "if-none-match": plain.etag! });
    expect([both.status, text(both.body)]).toEqual([412, '{"detail":"Precondition Failed"}']);
  });

  test("every check a 200 passes comes before If-Match: no key 401, a bad query 422, a reversed range 400", async () => {
    const app = testApp(db.service, { build: BUILD });
    const cases: [string, Record<string, string>, number, string][] = [
      [JAN, {}, 401, '{"detail":"INVALID_API_KEY"}'],
      ["/external/v1/product-costs?month_from=2024-01-01", auth, 422, '{"detail":[{"type":"missing","loc":["query","month_to"],"msg":"Field required","input":null}]}'],
      ["/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", auth, 400, '{"detail":"INVALID_MONTH_RANGE"}'],
    ];
    for (const [path, headers, status, body] of cases) {
      const res = await app.get(path, { ...headers, "if-match": '"nope"' });
      expect([res.status, await res.text()]).toEqual([status, body]);
    }
  });

  test("one tag per representation: JSON and CSV, and each content coding actually sent", async () => {
    const app = testApp(db.service, { build: BUILD });
    const tagOf = async (headers: Record<string, string>) => {
      const res = await app.get(JAN + "&segment=all", { ...auth, ...headers });
      await res.arrayBuffer();
      return { etag: res.headers.get("etag")!, coding: res.headers.get("content-encoding") };
    };
    const json = await tagOf({ "accept-encoding": "identity" });
    const csv = await tagOf({ "accept-encoding": "identity", accept: "text/csv" });
    expect(json.etag).toEndWith('-json"');
    expect(csv.etag).toBe(json.etag.replace('-json"', '-csv"'));
    expect(await tagOf({ "accept-encoding": "gzip" })).toEqual({ etag: json.etag.replace('-json"', '-json-gzip"'), coding: "gzip" });
    expect(await tagOf({ "accept-encoding": "gzip, br" })).toEqual({ etag: json.etag.replace('-json"', '-json-br"'), coding: "br" });
    // The CSV is under 1 KiB: it goes out uncompressed whatever is accepted, and its tag names
    // the identity form it is.
    expect(await tagOf({ "accept-encoding": "gzip", accept: "text/csv" })).toEqual({ etag: csv.etag, coding: null });
    // The CSV's tag does not revalidate the JSON, nor a compressed form's the identity one.
    expect((await read(app, JAN + "&segment=all", { "if-none-match": csv.etag })).status).toBe(200);
    expect((await read(app, JAN + "&segment=all", { "if-none-match": json.etag.replace('-json"', '-json-br"') })).status).toBe(200);
  });

  test("HEAD: the GET's status and headers, no body; and its 304", async () => {
    const app = testApp(db.service, { build: BUILD });
    const get = await read(app, JAN);
    const head = await app.handle(new Request(`http://localhost${JAN}`, { method: "HEAD", headers: { ...auth, "accept-encoding": "identity" } }));
    expect([head.status, head.headers.get("etag"), head.headers.get("content-type"), (await head.arrayBuffer()).byteLength]).toEqual([200, get.etag, "application/json", 0]);
    const revalidated = await app.handle(new Request(`http://localhost${JAN}`, { method: "HEAD", headers: { ...auth, "accept-encoding": "identity", "if-none-match": get.etag! } }));
    expect(revalidated.status).toBe(304);
  });

  test("a write inside the range changes its tag and its answer; one outside, and a refresh, change neither", async () => {
    const app = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(64 * 2 ** 20) });
    const FEB = "/external/v1/product-costs?month_from=2024-02-01&month_to=2024-02-29&segment=all";
    const jan = await read(app, JAN + "&segment=all");
    const feb = await read(app, FEB);
    await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where cost_date = (select min(cost_date) from product_daily_costs where cost_date >= '2024-01-01')`;
    const janAfter = await read(app, JAN + "&segment=all", { "if-none-match": jan.etag! });
    expect(janAfter.status).toBe(200);
    expect(janAfter.etag).not.toBe(jan.etag);
    expect(text(janAfter.body)).toBe(await naiveAnswer(db.service, "2024-01-01", "2024-01-31", "all"));
    expect((await read(app, FEB, { "if-none-match": feb.etag! })).status).toBe(304);
    await refreshRollup(db.admin);
    expect((await read(app, JAN + "&segment=all", { "if-none-match": janAfter.etag! })).status).toBe(304);
    expect((await read(app, FEB, { "if-none-match": feb.etag! })).status).toBe(304);
    // A product renamed shows in every range: every tag moves.
    await db.admin`update products set product_name = coalesce(product_name, '') || '!' where product_id = (select min(product_id) from products)`;
    expect((await read(app, FEB, { "if-none-match": feb.etag! })).status).toBe(200);
  });

  test("a request arriving while a version read runs, after a write committed, never gets that read's answer", async () => {
    const app = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(64 * 2 ** 20) });
    const path = JAN + "&segment=all";
    // Notes waiting for a refresh, in a month far away (changing nothing here), make each
    // version read take a while: long enough for a write to commit while one runs.
    await db.admin`insert into product_cost_deltas (product_id, month, days, rows) select (select min(product_id) from products), '2031-01-01', 1, '{0}' from generate_series(1, 100000)`;
    const ask = async (etag: string) => {
      const res = await app.get(path, { ...auth, "accept-encoding": "identity", "if-none-match": etag });
      await res.arrayBuffer();
      return res.status;
    };
    const before: number[] = [];
    const after: number[] = [];
    try {
      for (let round = 0; round < 5; round++) {
        const { etag } = await read(app, path);
        const early = Array.from({ length: 8 }, () => ask(etag!)); // their version read starts now
        await Bun.sleep(2);
        await db.admin`update product_daily_costs set warehouse_fees_usd = coalesce(warehouse_fees_usd, 0) + 1 where cost_date = (select max(cost_date) from product_daily_costs where cost_date <= '2024-01-31')`;
        const late = Array.from({ length: 8 }, () => ask(etag!)); // sent after the commit, that read maybe still running
        before.push(...(await Promise.all(early)));
        after.push(...(await Promise.all(late)));
      }
    } finally {
      // Also when it fails: the notes would slow every test after it down.
      await db.admin`delete from product_cost_deltas where month = '2031-01-01'`;
    }
    expect(before.filter((s) => s !== 304 && s !== 200)).toEqual([]);
    expect(after).toEqual(Array(40).fill(200)); // never the old tag's 304 once the write is in
    // The embedded database takes about 5 s on a 2-core machine (PostgreSQL 3.7 s): a time
    // limit for a hung test, not a speed target.
  }, 30_000);

  test("cached bytes are the uncached bytes and the GROUP BY's, compressed forms included; hits and misses counted", async () => {
    const metrics = createServiceMetrics({ version: "1", commit: "c" });
    const cached = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(64 * 2 ** 20), metrics });
    const plain = testApp(db.service, { build: BUILD });
    for (const range of [JAN, JAN + "&segment=all", "/external/v1/product-costs?month_from=2024-01-10&month_to=2024-02-20&segment=sample"]) {
      const u = new URL(`http://x${range}`);
      const expected = await naiveAnswer(db.service, u.searchParams.get("month_from")!, u.searchParams.get("month_to")!, (u.searchParams.get("segment") ?? "normal") as never);
      const uncached = await read(plain, range);
      const miss = await read(cached, range);
      const hit = await read(cached, range);
      expect([text(uncached.body), text(miss.body), text(hit.body)]).toEqual([expected, expected, expected]);
      expect(hit.etag).toBe(uncached.etag);
      const gz = await cached.get(range, { ...auth, "accept-encoding": "gzip" });
      const gzBody = new Uint8Array(await gz.arrayBuffer());
      expect(gz.headers.get("content-encoding") === "gzip" ? gunzipSync(gzBody).toString() : text(gzBody)).toBe(expected);
      const br = await cached.get(range, { ...auth, "accept-encoding": "br" });
      const brBody = new Uint8Array(await br.arrayBuffer());
      expect(br.headers.get("content-encoding") === "br" ? brotliDecompressSync(brBody).toString() : text(brBody)).toBe(expected);
    }
    const scraped = await (await cached.get("/metrics", {})).text();
    expect(scraped).toContain("product_cost_export_answer_cache_misses_total 3\n");
    expect(scraped).toMatch(/product_cost_export_answer_cache_hits_total 9\n/);
  });

  test("one ETag, one byte sequence: a kept answer's gzip and br are the bytes its first read streamed", async () => {
    // Small batches: the answer is read, kept and compressed in many chunks.
    const cached = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(64 * 2 ** 20), batchSize: 7 });
    const plain = testApp(db.service, { build: BUILD, batchSize: 7 });
    const path = JAN + "&segment=all";
    for (const coding of ["gzip", "br"]) {
      const raw = async (app: typeof plain) => {
        const res = await app.get(path, { ...auth, "accept-encoding": coding });
        expect(res.headers.get("content-encoding")).toBe(coding);
        return { etag: res.headers.get("etag"), body: Buffer.from(await res.arrayBuffer()) };
      };
      const [streamed, miss, hit] = [await raw(plain), await raw(cached), await raw(cached)];
      expect([miss.etag, hit.etag]).toEqual([streamed.etag, streamed.etag]);
      expect(miss.body.equals(streamed.body)).toBe(true);
      expect(hit.body.equals(streamed.body)).toBe(true);
    }
  });

  test("identical requests arriving together make one database read (compressed or not)", async () => {
    const app = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(64 * 2 ** 20) });
    const path = JAN + "&segment=all"; // over 1 KiB: compressed when asked
    const codings = ["identity", "gzip", "br", "identity", "gzip", "br", "gzip", "identity"];
    const answers = await Promise.all(
      codings.map(async (coding) => {
        const res = await app.get(path, { ...auth, "accept-encoding": coding });
        const bytes = Buffer.from(await res.arrayBuffer());
        const encoding = res.headers.get("content-encoding");
        return { status: res.status, body: encoding === "gzip" ? gunzipSync(bytes).toString() : encoding === "br" ? brotliDecompressSync(bytes).toString() : bytes.toString() };
      }),
    );
    const expected = await naiveAnswer(db.service, "2024-01-01", "2024-01-31", "all");
    expect(answers).toEqual(codings.map(() => ({ status: 200, body: expected })));
    // Only a request that read the database has first_rows_ms in its log line.
    const reads = app.logs.filter((l) => l.msg === "request" && l.first_rows_ms !== undefined);
    expect(reads.length).toBe(1);
  });

  test("two apps on one database give the same tag", async () => {
    const a = testApp(db.service, { build: BUILD });
    const b = testApp(db.service, { build: BUILD, answerCache: createAnswerCache(2 ** 20) });
    expect((await read(a, JAN)).etag).toBe((await read(b, JAN)).etag);
  });
});
