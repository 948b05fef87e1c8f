// Issue 43, part 3: a refresh that cannot finish does not stop the rest. A step whose
// statements PostgreSQL refuses for one product's data is narrowed down to that product: the
// other products' notes are folded, its own wait (reads add them up, exactly), the refresh
// ends with an error that names the product, its months, its notes and rows and PostgreSQL's
// words, and its record says it is failing (GET /metrics, /readyz) until a refresh folds all.
// The failure is made for real: a trigger on the months refuses product 7's rows.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { refreshRollup, RefreshIncompleteError } from "../../src/rollup/refresh.ts";
import { readRollupLag } from "../../src/rollup/rollup-lag.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { loadFixture, type DailyCostFixture, type ProductFixture } from "../support/fixtures.ts";
import { naiveAnswer, servedAndNaive } from "../support/rollup-oracle.ts";

const PRODUCTS: ProductFixture[] = Array.from({ length: 12 }, (_, i) => ({ product_id: i + 1, erp_product_id: 7700 + i, erp_sku: `SKU-${i}`, product_name: `P${i}`, is_sample: false }));
const DAILY: DailyCostFixture[] = PRODUCTS.flatMap((p) =>
  Array.from({ length: 31 }, (_, d) => ({ product_id: p.product_id, cost_date: `2026-10-${String(d + 1).padStart(2, "0")}`, purchase_cost_usd: `${d}.5`, inbound_freight_usd: "1", shipping_to_customer_usd: null, warehouse_fees_usd: "2" })),
);

describeBackends("a refresh that cannot fold one product, on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await refreshRollup(db.admin);
  }, 60_000);
  afterAll(async () => {
    await db.admin.unsafe("drop trigger if exists refuse_product_7 on product_cost_months; drop function if exists refuse_product_7()");
    await db.close();
  });

  const notesOf = async () => (await db.admin<{ id: string }[]>`select distinct product_id::text as id from product_cost_deltas order by 1`).map((r) => r.id);

  test("the other products are folded; the error names the product, its months, notes and rows; reads stay exact; the record says failing", async () => {
    await db.admin.unsafe(`
      create function refuse_product_7() returns trigger language plpgsql as $$
      begin
        if new.product_id = 7 then raise exception 'numeric field overflow (made by the test)' using errcode = '22003'; end if;
        return new;
      end $$;
      create trigger refuse_product_7 before insert or update on product_cost_months for each row execute function refuse_product_7()`);
    await db.admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where product_id in (3, 7, 12) and cost_date = '2026-10-05'`;
    await db.admin`update product_daily_costs set warehouse_fees_usd = 9 where product_id = 7 and cost_date = '2026-10-20'`;
    const failure = await refreshRollup(db.admin).catch((err) => err);
    expect(failure).toBeInstanceOf(RefreshIncompleteError);
    expect((failure as RefreshIncompleteError).unfolded).toEqual([
      { product_id: "7", months: ["2026-10-01"], notes: 2, rows: 31, error: "numeric field overflow (made by the test)" },
    ]);
    expect((failure as RefreshIncompleteError).message).toBe(
      "the refresh could not fold 1 product(s)' notes; the first, product 7 (2 notes of 2026-10-01, 31 daily rows): numeric field overflow (made by the test). " +
        "They wait, reads add them up (exact), and the next refresh tries them again; the rest is folded",
    );
    expect((failure as RefreshIncompleteError).report).toMatchObject({ mode: "changes", notes: 2 });
    expect(await notesOf()).toEqual(["7"]);
    for (const [from, to] of [["2026-10-01", "2026-10-31"], ["2026-10-03", "2026-10-21"]] as const) {
      const [served, naive] = await servedAndNaive(db.service, from, to);
      expect(served).toBe(naive);
      expect(served).toBe(await naiveAnswer(db.service, from, to, "all"));
    }
    expect(await readRollupLag(db.service, 5000)).toMatchObject({ refreshFailing: true, changesWaiting: 2 });
  });

  test("once it can, the next refresh folds it and the record says so", async () => {
    await db.admin.unsafe("drop trigger refuse_product_7 on product_cost_months; drop function refuse_product_7()");
    expect(await refreshRollup(db.admin)).toMatchObject({ mode: "changes", notes: 2 });
    expect(await notesOf()).toEqual([]);
    expect(await readRollupLag(db.service, 5000)).toMatchObject({ refreshFailing: false, changesWaiting: 0 });
    const [served, naive] = await servedAndNaive(db.service, "2026-10-01", "2026-10-31");
    expect(served).toBe(naive);
  });
});
