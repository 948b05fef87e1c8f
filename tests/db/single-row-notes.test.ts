// Migration 0010: a statement that changes one row is noted without the general query. Its
// note must be the general query's (0006's, kept as product_cost_deltas_note_general) in
// every case: one row added, removed or replaced under its key, NaN and null amounts,
// nothing changed, a change of scale only, the first and the last day of a month; a key
// changed goes the general way. Then the triggers themselves: single-row writes, refreshed,
// sum to the GROUP BY.

import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { monthsDrift } from "../support/rollup-oracle.ts";

/** A product_daily_costs row as SQL: product, day, then the four amounts (null, 'NaN' or a number). */
type Row = [number, string, ...(string | null)[]];
const row = ([product, day, ...amounts]: Row) =>
  `row(${product}, '${day}', ${amounts.map((a) => (a === null ? "null" : `'${a}'`)).join(", ")})::product_daily_costs`;
const rows = (list: Row[]) => (list.length ? `array[${list.map(row).join(", ")}]` : "'{}'::product_daily_costs[]");

const NOTE_COLUMNS = `product_id, month, days, rows, purchase_cost_usd::text[], purchase_cost_usd_count, inbound_freight_usd::text[],
  inbound_freight_usd_count, shipping_to_customer_usd::text[], shipping_to_customer_usd_count, warehouse_fees_usd::text[], warehouse_fees_usd_count`;

/** The notes `fn` writes for one statement that added `added` and removed `removed` (rolled back after). */
async function notes(admin: Sql, fn: string, added: Row[], removed: Row[]): Promise<unknown[]> {
  let written: unknown[] = [];
  await admin
    .begin(async (tx) => {
      await tx.unsafe("delete from product_cost_deltas");
      await tx.unsafe(`select ${fn}(${rows(added)}, ${rows(removed)})`);
      written = [...(await tx.unsafe(`select ${NOTE_COLUMNS} from product_cost_deltas order by product_id, month`))];
      throw new Error("roll back");
    })
    .catch((err) => {
      if ((err as Error).message !== "roll back") throw err;
    });
  return written;
}

const CASES: { name: string; added: Row[]; removed: Row[]; notes: number }[] = [
  { name: "one row added", added: [[1, "2024-01-05", "1.5", "2", null, "0.000001"]], removed: [], notes: 1 },
  { name: "one row added, NaN and nulls", added: [[1, "2024-01-01", "NaN", null, "NaN", null]], removed: [], notes: 1 },
  { name: "one row removed, the last day of a month", added: [], removed: [[2, "2024-01-31", "7", "8", "9", "10"]], notes: 1 },
  { name: "one row replaced, amounts changed", added: [[3, "2024-02-29", "5", null, "1", "NaN"]], removed: [[3, "2024-02-29", "4", "2", null, "3"]], notes: 1 },
  { name: "one row replaced by the same values", added: [[3, "2024-02-10", "5", null, "NaN", "1"]], removed: [[3, "2024-02-10", "5", null, "NaN", "1"]], notes: 0 },
  { name: "one row replaced, only the scale changed", added: [[3, "2024-02-10", "5.000000", null, null, "1.50"]], removed: [[3, "2024-02-10", "5", null, null, "1.5"]], notes: 0 },
  { name: "NaN replaced by null: no value either way", added: [[3, "2024-02-10", null, "1", "1", "1"]], removed: [[3, "2024-02-10", "NaN", "1", "1", "1"]], notes: 0 },
  { name: "a value replaced by null", added: [[4, "2024-03-15", null, "1", "1", "1"]], removed: [[4, "2024-03-15", "-12.345678", "1", "1", "1"]], notes: 1 },
  { name: "a key changed (general path)", added: [[5, "2024-03-01", "1", "1", "1", "1"]], removed: [[6, "2024-03-01", "1", "1", "1", "1"]], notes: 2 },
  { name: "two rows (general path)", added: [[7, "2024-03-01", "1", null, null, null], [7, "2024-03-02", "2", null, null, null]], removed: [], notes: 1 },
  { name: "nothing", added: [], removed: [], notes: 0 },
];

describeBackends("single-row notes on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
  });
  afterAll(() => db?.close());

  for (const c of CASES) {
    test(`${c.name}: the general query's note`, async () => {
      const fast = await notes(db.admin, "product_cost_deltas_note", c.added, c.removed);
      const general = await notes(db.admin, "product_cost_deltas_note_general", c.added, c.removed);
      expect(fast).toEqual(general);
      expect(fast).toHaveLength(c.notes);
    });
  }

  test("single-row inserts, upserts and deletes through the triggers, refreshed, sum to the GROUP BY", async () => {
    const { admin } = db;
    await admin`truncate product_daily_costs, products`;
    await admin`insert into products (product_id, erp_product_id, erp_sku, product_name) select i, i, 'SKU-' || i, 'P' || i from generate_series(1, 3) i`;
    await refreshRollup(admin, { wait: true });
    const upsert = (p: number, day: string, amount: string | null) =>
      admin`insert into product_daily_costs values (${p}, ${day}::date, ${amount}::numeric, 1, null, 'NaN')
            on conflict (product_id, cost_date) do update set purchase_cost_usd = excluded.purchase_cost_usd`;
    await upsert(1, "2024-01-01", "10.5");
    await upsert(1, "2024-01-31", "NaN");
    await upsert(2, "2024-02-29", "3");
    await upsert(1, "2024-01-01", "11.25"); // replaced
    await upsert(1, "2024-01-31", "2"); // NaN replaced
    await upsert(2, "2024-02-29", "3.000"); // the same value
    await upsert(3, "2024-01-15", null);
    await admin`delete from product_daily_costs where product_id = 3 and cost_date = '2024-01-15'`;
    await admin`update product_daily_costs set cost_date = '2024-02-01' where product_id = 1 and cost_date = '2024-01-31'`; // a key changed
    await refreshRollup(admin, { wait: true });
    expect(await monthsDrift(admin)).toEqual([]);
    const naive = await admin`select product_id, sum(nullif(purchase_cost_usd, 'NaN'))::text as purchase, count(nullif(purchase_cost_usd, 'NaN'))::int as n
      from product_daily_costs group by product_id order by product_id`;
    expect([...naive]).toEqual([
      { product_id: "1", purchase: "13.250000", n: 2 },
      { product_id: "2", purchase: "3.000000", n: 1 },
    ]);
  });
});
