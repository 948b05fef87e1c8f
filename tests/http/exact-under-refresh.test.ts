// Issue 52: readers with the answer cache on while the ETL writes and the refresh folds, every
// answer compared with the GROUP BY. Each round the ETL commits one write (a new month's first
// row, a backfill before the window, a correction), then clients read random ranges, some with
// the ETags they were given, while a refresh (or a rebuild) runs; the data stays the same during
// it, so every 200 must be the GROUP BY of then, and every 304 must stand for it. Afterwards,
// with nothing running, every range is read again and asked about with every ETag it was given.
// Before the fix, answers read while the refresh folded a new month missed its first row, and
// the cache then kept the wrong sums behind 304s for good.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import type { Sql } from "../../src/database/client.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { namedPool } from "../support/faults.ts";
import { loadDenseFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { prng } from "../support/random-fixture.ts";
import { testSeed } from "../support/seed.ts";
import naiveQuery from "../db/naive_product_costs.sql" with { type: "text" };

const PATH = "/external/v1/product-costs";
const CLIENTS = 6;

/** The JSON the service writes for the naive GROUP BY's rows (numbers as their exact text). */
function json(rows: Record<string, string | null>[]): string {
  const value = (v: string | null) => (v === null ? "null" : v);
  return `[${rows
    .map(
      (r) =>
        `{"erp_product_id":${value(r.erp_product_id!)},"erp_sku":${JSON.stringify(r.erp_sku)},"product_name":${JSON.stringify(r.product_name)},` +
        `"purchase_cost_usd":${value(r.purchase_cost_usd!)},"inbound_freight_usd":${value(r.inbound_freight_usd!)},` +
        `"shipping_to_customer_usd":${value(r.shipping_to_customer_usd!)},"warehouse_fees_usd":${value(r.warehouse_fees_usd!)}}`,
    )
    .join(",")}]`;
}

/** An amount's unscaled integer (×10^6) as PostgreSQL writes the decimal: "12.5", "-0.000001", "0". */
function decimalText(unscaled: bigint): string {
  const sign = unscaled < 0n ? "-" : "";
  const digits = (unscaled < 0n ? -unscaled : unscaled).toString().padStart(7, "0");
  const fraction = digits.slice(-6).replace(/0+$/, "");
  return `${sign}${digits.slice(0, -6)}${fraction ? `.${fraction}` : ""}`;
}

/** An Arrow answer as the JSON the service writes for the same rows: the two compared with one GROUP BY. */
function arrowAsJson(bytes: Uint8Array): string {
  const table = tableFromIPC(bytes);
  const cell = (name: string, r: number): string | null => {
    const column = table.getChild(name)!;
    if (!column.isValid(r)) return null;
    if (name === "erp_product_id" || name === "erp_sku" || name === "product_name") return String(column.get(r));
    let at = r;
    const chunk = column.data.find((d) => (at < d.length ? true : ((at -= d.length), false)))!;
    const words = chunk.values as Uint32Array;
    let value = 0n;
    for (let w = 3; w >= 0; w--) value = (value << 32n) | BigInt(words[(chunk.offset + at) * 4 + w]!);
    return decimalText(BigInt.asIntN(128, value));
  };
  const names = table.schema.fields.map((f) => f.name);
  return json(Array.from({ length: table.numRows }, (_, r) => Object.fromEntries(names.map((name) => [name, cell(name, r)]))));
}

describeWithPostgres("answers exact, and every 304 true, while the refresh folds what the ETL writes", () => {
  let db: TestDatabase;
  let sql: Sql;
  let app: TestApp;

  beforeAll(async () => {
    db = await testDatabase();
    sql = namedPool(db.url, `pce-exact-${process.pid}`, { max: CLIENTS + 2 });
  }, 60_000);

  afterAll(async () => {
    await sql.end({ timeout: 2 });
  });

  // JSON, and the Arrow stream (issue 55) read back into the same rows: one answer version, cache and ETag machinery for both.
  test.each([
    ["JSON", {}],
    ["Arrow", { accept: "application/vnd.apache.arrow.stream" }],
  ] as const)("%s: rounds of a write and a refresh under six clients: every 200 the GROUP BY's, every 304 for the GROUP BY's body, then and afterwards", async (format, accept) => {
    const bodyOf = async (res: Response) => (format === "Arrow" && res.status === 200 ? arrowAsJson(new Uint8Array(await res.arrayBuffer())) : res.text());
    // Each format from the same data, its own answer cache.
    app = testApp(sql, { answerCache: createAnswerCache(32 * 2 ** 20) });
    await loadDenseFixture(db.admin, { products: 40, from: "2026-01-01", to: "2026-05-30", sampleEvery: 5 });
    await refreshRollup(db.admin, { rebuild: true });
    const random = prng(testSeed(format === "JSON" ? "exact under refresh" : "exact under refresh, Arrow"));
    // Day i of the data's span (from 2025-11-01); the ranges' edges fall anywhere in it.
    const DAY0 = Date.UTC(2025, 10, 1);
    const dayOf = (i: number) => new Date(DAY0 + i * 86_400_000).toISOString().slice(0, 10);
    const indexOf = (d: Date) => Math.round((d.getTime() - DAY0) / 86_400_000);
    const bodies = new Map<string, string>(); // ETag -> the body it was given with
    const tagsOf = new Map<string, Set<string>>(); // range query -> ETags given for it
    const problems: string[] = [];
    const refreshMs: number[] = [];
    let newMonth = new Date(Date.UTC(2026, 5, 1));
    const expectedOf = async (query: string) => {
      const q = new URLSearchParams(query);
      return json(await db.admin.unsafe(naiveQuery, [q.get("month_from")!, q.get("month_to")!, q.get("segment") ?? "normal"]));
    };

    for (let round = 0; round < 8; round++) {
      // The ETL's write, committed before the round's reads.
      const first = newMonth.toISOString().slice(0, 10);
      const kind = round % 4 === 3 ? "backfill" : round % 4 === 2 ? "correction" : "new month";
      if (kind === "new month") {
        await db.admin`insert into product_daily_costs values (${1 + (round % 40)}, ${first}::date, 10, 20, 30, 40)`;
        newMonth = new Date(Date.UTC(newMonth.getUTCFullYear(), newMonth.getUTCMonth() + 1, 1));
      } else if (kind === "backfill") {
        await db.admin`insert into product_daily_costs values (${3 + round}, ${dayOf(Math.floor(random() * 30))}::date, 1, 2, 3, 4) on conflict do nothing`;
      } else {
        await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where product_id = ${round} and cost_date = '2026-02-14'`;
      }
      const last = indexOf(newMonth); // the first day past the data
      const latestFirst = indexOf(new Date(Date.UTC(newMonth.getUTCFullYear(), newMonth.getUTCMonth() - 1, 1))); // the newest month's first row
      const expected = new Map<string, Promise<string>>();
      const expect1 = (query: string) => (expected.has(query) ? expected.get(query)! : (expected.set(query, expectedOf(query)), expected.get(query)!));
      let running = true;
      const clients = Array.from({ length: CLIENTS }, async () => {
        while (running) {
          // Edges from a few days, so ranges repeat (the cache and ETags at work); half of them
          // end on the newest month's first day, the row a refresh folds.
          const edges = [0, 31, 75, 92, 120, 150, 181, latestFirst - 1, latestFirst, last - 1].filter((i) => i < last);
          const pick = () => edges[Math.floor(random() * edges.length)]!;
          const [from, to] = [pick(), random() < 0.5 ? latestFirst : pick()].sort((x, y) => x - y) as [number, number];
          const query = `month_from=${dayOf(from)}&month_to=${dayOf(to)}&segment=${["normal", "all", "sample"][Math.floor(random() * 3)]}`;
          const known = [...(tagsOf.get(query) ?? [])];
          const tag = known.length && random() < 0.5 ? known[Math.floor(random() * known.length)] : undefined;
          const res = await app.get(`${PATH}?${query}`, { authorization: `Bearer ${KEY}`, ...accept, ...(tag ? { "if-none-match": tag } : {}) });
          const body = await bodyOf(res);
          const want = await expect1(query);
          if (res.status === 304) {
            if (bodies.get(tag!) !== want) problems.push(`round ${round} (${kind}): 304 for ${tag} on ${query}, whose body is not the GROUP BY's`);
          } else if (res.status !== 200) problems.push(`round ${round}: ${res.status} ${body} on ${query}`);
          else {
            if (body !== want) problems.push(`round ${round} (${kind}): a 200 that is not the GROUP BY's on ${query}`);
            const etag = res.headers.get("etag")!;
            if (bodies.has(etag) && bodies.get(etag) !== body) problems.push(`round ${round}: ${etag} stands for two bodies`);
            bodies.set(etag, body);
            tagsOf.set(query, (tagsOf.get(query) ?? new Set()).add(etag));
          }
        }
      });
      await Bun.sleep(20);
      const t0 = performance.now();
      await refreshRollup(db.admin, round === 5 ? { rebuild: true } : {});
      refreshMs.push(Math.round(performance.now() - t0));
      running = false;
      await Promise.all(clients);
      // Nothing running: every range of the round, again, and asked about with each ETag it was ever given.
      for (const query of expected.keys()) {
        const tags = tagsOf.get(query) ?? new Set<string>();
        const want = await expectedOf(query);
        const res = await app.get(`${PATH}?${query}`, { authorization: `Bearer ${KEY}`, ...accept });
        if ((await bodyOf(res)) !== want) problems.push(`after round ${round}: the answer on ${query} is not the GROUP BY's`);
        for (const tag of tags) {
          const conditional = await app.get(`${PATH}?${query}`, { authorization: `Bearer ${KEY}`, ...accept, "if-none-match": tag });
          await conditional.arrayBuffer();
          if (conditional.status === 304 && bodies.get(tag) !== want) problems.push(`after round ${round}: 304 for ${tag} on ${query}, whose body is not the GROUP BY's`);
        }
      }
    }
    console.log(`exact under refresh (${format}): ${bodies.size} bodies, refreshes of ${refreshMs.join(", ")} ms`);
    expect(problems.slice(0, 20)).toEqual([]);
    expect(bodies.size).toBeGreaterThan(50);
  }, 120_000);
});
