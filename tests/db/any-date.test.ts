// Issue 43: rows dated anywhere PostgreSQL's date type reaches, 4713 BC to 5874897 AD,
// `infinity` and `-infinity` included, beside ordinary data. An ETL writes them (sentinels
// for "open-ended", typos, imports of other systems' dates): its writes must succeed (the
// notes' trigger failed past 294276 AD, where timestamps end), and every read must equal the
// naive GROUP BY (one `infinity` row made reads of a week, a month or a range across a
// month's end answer 500). A request's dates run from 0001-01-01 to 9999-12-31, as the
// original's: rows outside that never show, as in its GROUP BY.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { checkReadiness } from "../../src/reads/readiness.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { loadFixture, type DailyCostFixture, type ProductFixture } from "../support/fixtures.ts";
import { answerDrift, monthsDrift, naiveAnswer } from "../support/rollup-oracle.ts";

const PRODUCTS: ProductFixture[] = Array.from({ length: 12 }, (_, i) => ({
  product_id: i + 1,
  erp_product_id: 4300 + i,
  erp_sku: `SKU-${String(i).padStart(3, "0")}`,
  product_name: `Product ${i}`,
  is_sample: i % 4 === 0,
}));
const ORDINARY: DailyCostFixture[] = PRODUCTS.flatMap((p, i) =>
  Array.from({ length: 61 }, (_, d) => ({
    product_id: p.product_id,
    cost_date: new Date(Date.UTC(2026, 8, 1 + d)).toISOString().slice(0, 10), // 2026-09-01 .. 2026-10-31
    purchase_cost_usd: `${(i + 1) * 1.25 + d}`,
    inbound_freight_usd: d % 3 ? "0.5" : null,
    shipping_to_customer_usd: "2",
    warehouse_fees_usd: d % 7 === 0 ? "NaN" : `${d % 5}`,
  })),
);
// Every kind of far date, each for a product of its own and for product 1.
const FAR_DATES = ["4713-01-01 BC", "-infinity", "0001-01-01", "1899-12-31", "2099-12-31", "2206-10-15", "2999-12-31", "9999-12-31", "300000-06-15", "5874897-12-31", "infinity"];
const FAR: DailyCostFixture[] = FAR_DATES.flatMap((cost_date, i) => [
  { product_id: 2 + (i % 11), cost_date, purchase_cost_usd: "1000000", inbound_freight_usd: "1", shipping_to_customer_usd: null, warehouse_fees_usd: "3" },
  { product_id: 1, cost_date, purchase_cost_usd: "0.000001", inbound_freight_usd: null, shipping_to_customer_usd: "4", warehouse_fees_usd: null },
]);

// Every shape of range, and ones reaching the far dates a request can name.
const RANGES = [
  ["2026-10-07", "2026-10-07"],
  ["2026-10-05", "2026-10-11"],
  ["2026-10-01", "2026-10-31"],
  ["2026-09-15", "2026-10-14"],
  ["2026-09-01", "2026-12-31"],
  ["0001-01-01", "9999-12-31"],
  ["0001-01-01", "0001-01-31"],
  ["9999-12-01", "9999-12-31"],
  ["2099-12-31", "2099-12-31"],
  ["2026-10-15", "2206-12-31"],
  ["1899-01-01", "2026-09-30"],
] as const;

describeBackends("rows dated anywhere the date type reaches, on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, ORDINARY);
    app = testApp(db.service, { batchSize: 5 });
  }, 60_000);
  afterAll(() => db.close());

  const answers = async () => {
    const wrong: unknown[] = [];
    for (const [from, to] of RANGES) {
      for (const segment of ["normal", "sample", "all"] as const) {
        const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`, { authorization: `Bearer ${KEY}` });
        const got = { status: res.status, body: await res.text() };
        const expected = { status: 200, body: await naiveAnswer(db.service, from, to, segment) };
        if (got.status !== expected.status || got.body !== expected.body) wrong.push({ from, to, segment, got: got.body.slice(0, 200), expected: expected.body.slice(0, 200) });
      }
    }
    return wrong;
  };

  test("an ETL writes them (one row at a time and many at once, insert, update, delete): every write succeeds", async () => {
    await loadFixture(db.admin, PRODUCTS, [...ORDINARY, ...FAR.slice(0, 8)]); // many rows in one statement
    for (const row of FAR.slice(8)) {
      await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
        values (${String(row.product_id)}::bigint, ${row.cost_date}::text::date, ${row.purchase_cost_usd ?? null}::numeric, ${row.inbound_freight_usd ?? null}::numeric,
                ${row.shipping_to_customer_usd ?? null}::numeric, ${row.warehouse_fees_usd ?? null}::numeric)`;
    }
    await db.admin`update product_daily_costs set warehouse_fees_usd = 7 where cost_date in ('5874897-12-31', 'infinity', '4713-01-01 BC') and product_id = 1`;
    await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where not isfinite(cost_date) or cost_date > '9999-12-31' or cost_date < '0001-01-01'`;
    await db.admin`delete from product_daily_costs where product_id = 1 and cost_date = '300000-06-15'`;
    await db.admin`insert into product_daily_costs values (1, '300000-06-15', 5, 5, 5, 5)`;
    const [{ n }] = (await db.admin<{ n: number }[]>`select count(*)::int as n from product_daily_costs`) as unknown as [{ n: number }];
    expect(n).toBe(ORDINARY.length + FAR.length);
  });

  test("every range shape equals the GROUP BY, while the notes wait for the refresh", async () => {
    expect(await answers()).toEqual([]);
  });

  test("readiness is READY: the data is no database problem", async () => {
    expect(await checkReadiness(db.service, 5000)).toEqual({ ready: true, source: { name: "rollup" } });
  });

  const window = async () =>
    (await db.admin<{ first: string | null; last: string | null; before: string | null; after: string | null }[]>`
      select window_first::text as first, window_last::text as last, outside_before::text as before, outside_after::text as after from product_cost_refreshes`)[0];
  const monthRows = async () => (await db.admin<{ n: number }[]>`select count(*)::int as n from product_cost_months`)[0]!.n;

  test("a refresh keeps the months of the ordinary data only: two per product, whatever the far dates; every range exact", async () => {
    const started = performance.now();
    const report = await refreshRollup(db.admin);
    expect(report).toMatchObject({ mode: "rebuild" });
    expect(performance.now() - started).toBeLessThan(20_000); // 2999-12-31 alone ran out of shared memory
    // September and October 2026: the run with the most days. The nearest months outside it
    // with rows a request can name: 2099-12 after, 1899-12 before.
    expect(await window()).toEqual({ first: "2026-09-01", last: "2026-10-01", before: "1899-12-01", after: "2099-12-01" });
    expect(await monthRows()).toBe(PRODUCTS.length * 2);
    expect({ months: await monthsDrift(db.service), answers: await answerDrift(db.service) }).toEqual({ months: [], answers: [] });
    expect(await answers()).toEqual([]);
  }, 60_000);

  test("the ETL's next month widens the window as it comes; far rows written later are read as they are, and forgotten by the refresh", async () => {
    await db.admin`insert into product_daily_costs select product_id, date '2026-11-01', 1, 2, 3, 4 from products`;
    await db.admin`insert into product_daily_costs values (3, '2206-01-15', 9, 9, 9, 9), (4, '0001-01-02', 1, 1, 1, 1), (5, 'infinity', 1, 1, 1, 1)`;
    expect(await answers()).toEqual([]);
    expect(await refreshRollup(db.admin)).toMatchObject({ mode: "changes" });
    expect(await window()).toEqual({ first: "2026-09-01", last: "2026-11-01", before: "1899-12-01", after: "2099-12-01" });
    expect(await monthRows()).toBe(PRODUCTS.length * 3);
    expect((await db.admin<{ n: number }[]>`select count(*)::int as n from product_cost_deltas`)[0]!.n).toBe(0);
    expect({ months: await monthsDrift(db.service), answers: await answerDrift(db.service) }).toEqual({ months: [], answers: [] });
    expect(await answers()).toEqual([]);
  }, 60_000);

  test("a far date deleted and the data rebuilt: the same months, every range exact, no partition past the window", async () => {
    // Partitions past the window, as months dense up to a far date left them (901 at 5,000
    // products with one row dated 2099-12-31): the rebuild drops them.
    const past = async () =>
      (
        await db.admin<{ name: string }[]>`
          select c.relname::text as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
          where i.inhparent = 'product_cost_months'::regclass and c.relname > 'product_cost_months_2026_11' and c.relname <> 'product_cost_months_history'
          order by 1`
      ).map((p) => p.name);
    await db.admin`select product_cost_months_cover('2027-03-01')`;
    expect(await past()).toEqual(["product_cost_months_2026_12", "product_cost_months_2027_01", "product_cost_months_2027_02", "product_cost_months_2027_03"]);
    await db.admin`delete from product_daily_costs where cost_date > '2027-01-01' and cost_date < '3000-01-01'`;
    expect(await refreshRollup(db.admin, { rebuild: true })).toMatchObject({ mode: "rebuild" });
    expect(await past()).toEqual([]);
    expect(await window()).toEqual({ first: "2026-09-01", last: "2026-11-01", before: "1899-12-01", after: "9999-12-01" });
    expect(await monthRows()).toBe(PRODUCTS.length * 3);
    expect({ months: await monthsDrift(db.service), answers: await answerDrift(db.service) }).toEqual({ months: [], answers: [] });
    expect(await answers()).toEqual([]);
  }, 60_000);

  test("a row within a year of the window but beyond a row the refresh forgot: the refresh rebuilds rather than lose it", async () => {
    // 2027-12 lies more than a year after 2026-11: outside, forgotten. Then 2027-06 widens the
    // window over... no: 2027-06 is within a year of 2026-11, and 2027-12 within a year of it.
    await db.admin`insert into product_daily_costs values (6, '2028-02-10', 5, 5, 5, 5)`;
    await refreshRollup(db.admin);
    expect((await window())?.after).toBe("2028-02-01");
    await db.admin`insert into product_daily_costs values (7, '2027-06-10', 5, 5, 5, 5), (7, '2028-01-10', 5, 5, 5, 5), (8, '2028-02-20', 1, 1, 1, 1)`;
    expect(await answers()).toEqual([]);
    expect(await refreshRollup(db.admin)).toMatchObject({ mode: "rebuild" });
    expect(await window()).toMatchObject({ first: "2026-09-01", last: "2028-02-01" });
    expect({ months: await monthsDrift(db.service), answers: await answerDrift(db.service) }).toEqual({ months: [], answers: [] });
    expect(await answers()).toEqual([]);
  }, 60_000);
});
