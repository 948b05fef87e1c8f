// Random products, daily rows and writes for the property tests of the rollup and its
// writers, from a seeded PRNG: the same seed gives the same sequence (on one session).
// Writes cover what an ETL and an operator do to the contract tables: inserts, upserts,
// updates of amounts, dates and product ids, deletes, COPY, TRUNCATE and reload, rolled-back
// transactions, NaN amounts, product attribute changes (UPDATE, MERGE, upsert, in any
// isolation level), and a product deleted together with its daily rows.

import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type postgres from "postgres";
import type { Sql as Pool } from "../../src/database/client.ts";

/** A pool or a transaction: every helper below works in either. */
export type Sql = Pool | postgres.TransactionSql<{}>;

/** mulberry32: a tiny seeded PRNG, good enough to pick test cases. */
export function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)); // inclusive
  const pick = <T>(xs: readonly T[]): T => xs[int(0, xs.length - 1)]!;
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Rng = ReturnType<typeof prng>;

// Days span a year end, a leap February and month ends of every length.
export const FIRST_DAY = Date.UTC(2023, 10, 20); // 2023-11-20
export const DAYS = 180; // .. 2024-05-17
export const PRODUCTS = 30;
export const COLUMNS = ["purchase_cost_usd", "inbound_freight_usd", "shipping_to_customer_usd", "warehouse_fees_usd"] as const;

export const isoDay = (offset: number) => new Date(FIRST_DAY + offset * 86_400_000).toISOString().slice(0, 10);

export function amount(r: Rng): string | null {
  const k = r.int(0, 99);
  if (k < 3) return "NaN"; // legal in numeric(20,6): counted as not costed
  if (k < 20) return null;
  if (k < 30) return "0";
  if (k < 33) return "99999999999999.999999"; // the column's largest value: sums must stay exact
  const cents = `${r.int(0, 99_999)}.${String(r.int(0, 999_999)).padStart(6, "0")}`;
  return k < 40 ? "-" + cents : cents;
}

export interface Daily {
  product_id: number;
  cost_date: string;
  amounts: (string | null)[];
}

/**
 * Dates from the whole domain of PostgreSQL's date type that an ETL may write (issue 43):
 * sentinels, typos, other systems' placeholders, both ends of the type and past where
 * timestamps end, a date within a year of the data and one just beyond.
 */
export const FAR_DATES = [
  "4713-01-01 BC", "0044-03-15 BC", "-infinity", "0001-01-01", "1899-12-31", "1999-06-30", "2022-10-31", "2024-12-01", "2025-07-01",
  "2099-12-31", "2206-02-28", "2999-12-31", "9999-12-31", "10000-01-01", "294276-12-31", "300000-02-29", "5874897-12-31", "infinity",
] as const;

export function randomDaily(r: Rng): Daily {
  // One row in 25 far away: they are read as they are, outside the rollup's window of months.
  const cost_date = r.chance(0.04) ? r.pick(FAR_DATES) : isoDay(r.int(0, DAYS - 1));
  return { product_id: r.int(1, PRODUCTS), cost_date, amounts: COLUMNS.map(() => amount(r)) };
}

/** `n` rows with distinct (product, day) keys. */
export function randomRows(r: Rng, n: number): Daily[] {
  const byKey = new Map<string, Daily>();
  for (let i = 0; i < n; i++) {
    const d = randomDaily(r);
    byKey.set(`${d.product_id}/${d.cost_date}`, d);
  }
  return [...byKey.values()];
}

export async function loadProducts(sql: Sql, r: Rng): Promise<void> {
  const skus = ["SKU-A", "SKU-B", "sku-b", "SKU-B", "Z", "ä-sku", null, null];
  const rows = Array.from({ length: PRODUCTS }, (_, i) => {
    const sku = r.pick(skus);
    return {
      product_id: String(i + 1),
      erp_product_id: sku === null && r.chance(0.7) ? null : String(r.int(1, 5) * 1000),
      erp_sku: sku,
      product_name: r.chance(0.1) ? null : `Product ${i + 1}`,
      is_sample: r.chance(0.3),
    };
  });
  await sql`insert into products ${sql(rows)}`;
}

export async function insertRows(sql: Sql, rows: Daily[], onConflict: "nothing" | "update"): Promise<void> {
  if (rows.length === 0) return;
  const values = rows.map((d) => ({
    product_id: String(d.product_id),
    cost_date: d.cost_date,
    ...Object.fromEntries(COLUMNS.map((c, i) => [c, d.amounts[i]])),
  }));
  // Through JSON: postgres.js sends a date parameter through JavaScript's Date, which holds
  // neither `infinity` nor BC dates nor years past 275760; PostgreSQL reads the text itself.
  const rowsOf = sql`select * from jsonb_populate_recordset(null::product_daily_costs, ${sql.json(values as never)})`;
  if (onConflict === "nothing") {
    await sql`insert into product_daily_costs ${rowsOf} on conflict do nothing`;
  } else {
    // The ETL's upsert: fires the INSERT trigger for new keys and the UPDATE trigger for existing ones.
    await sql`insert into product_daily_costs ${rowsOf}
              on conflict (product_id, cost_date) do update set
                purchase_cost_usd = excluded.purchase_cost_usd, inbound_freight_usd = excluded.inbound_freight_usd,
                shipping_to_customer_usd = excluded.shipping_to_customer_usd, warehouse_fees_usd = excluded.warehouse_fees_usd`;
  }
}

/**
 * A bulk load: COPY FROM STDIN, or, where the backend has no COPY (PGlite's socket server
 * hangs on it), one multi-row INSERT. Both fire the statement-level INSERT trigger once.
 */
export async function bulkLoad(sql: Sql, rows: Daily[], viaCopy: boolean): Promise<void> {
  if (!viaCopy) {
    for (let i = 0; i < rows.length; i += 1000) await insertRows(sql, rows.slice(i, i + 1000), "nothing");
    return;
  }
  const text = rows.map((d) => [d.product_id, d.cost_date, ...d.amounts.map((a) => a ?? "\\N")].join("\t") + "\n").join("");
  const writable = await sql`copy product_daily_costs
    (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
    from stdin`.writable();
  await pipeline(Readable.from([text]), writable);
}

/** Keys of existing rows, a random subset of about `fraction` of them. */
export async function someKeys(sql: Sql, r: Rng, fraction: number): Promise<{ ids: string[]; dates: string[] }> {
  const rows = await sql<{ product_id: string; cost_date: string }[]>`
    select product_id::text, cost_date::text from product_daily_costs order by product_id, cost_date`;
  const chosen = rows.filter(() => r.chance(fraction));
  return { ids: chosen.map((x) => x.product_id), dates: chosen.map((x) => x.cost_date) };
}

export const CHOSEN = (sql: Sql, keys: { ids: string[]; dates: string[] }) =>
  sql`(product_id, cost_date) in (select * from unnest(${keys.ids}::bigint[], ${keys.dates}::text[]::date[]))`;

const ISOLATION = ["read committed", "repeatable read", "serializable"] as const;

/**
 * One random write; returns its name for the failure message. Writes of daily rows run
 * half the time in a transaction of a random isolation level (the triggers must note the
 * same whatever the level), the rest as autocommit statements.
 */
export async function randomWrite(sql: Pool, r: Rng, viaCopy: boolean): Promise<string> {
  const kind = r.int(0, 13); // 8 and 10: transactions of their own; 11 and 12: products change; 13: a product goes, with its rows
  if (kind <= 7 || kind === 9) {
    if (r.chance(0.5)) {
      const isolation = r.pick(ISOLATION);
      const what = (await sql.begin(`isolation level ${isolation}`, (tx) => write(tx, r, viaCopy, kind))) as string;
      return `${what} in ${isolation}`;
    }
  }
  return write(sql, r, viaCopy, kind);
}

async function write(sql: Sql, r: Rng, viaCopy: boolean, kind: number): Promise<string> {
  switch (kind) {
    case 0:
    case 1:
      await insertRows(sql, randomRows(r, r.int(1, 60)), "nothing");
      return "insert";
    case 2:
      await insertRows(sql, randomRows(r, r.int(1, 60)), "update");
      return "upsert";
    case 3: {
      const keys = await someKeys(sql, r, r.next() * 0.5);
      const col = r.pick(COLUMNS);
      await sql`update product_daily_costs set ${sql(col)} = ${amount(r)}::numeric where ${CHOSEN(sql, keys)}`;
      return `update ${col} of ${keys.ids.length} rows`;
    }
    case 4: {
      // Move rows to another day where that day is free (a moved row never collides).
      const keys = await someKeys(sql, r, r.next() * 0.4);
      const shift = r.pick([-40, -31, -1, 1, 3, 29, 31, 62]);
      // (Dates a request can name: a move past either end of the date type is no ETL's.)
      await sql`update product_daily_costs d set cost_date = d.cost_date + ${shift}::int
                where ${CHOSEN(sql, keys)} and d.cost_date between '0001-03-01' and '9999-10-31' and not exists (select 1 from product_daily_costs e
                  where e.product_id = d.product_id and e.cost_date = d.cost_date + ${shift}::int)`;
      return `move ${keys.ids.length} rows by ${shift} days`;
    }
    case 5: {
      const keys = await someKeys(sql, r, r.next() * 0.4);
      const shift = r.int(1, PRODUCTS - 1);
      await sql`update product_daily_costs d set product_id = (d.product_id + ${shift}) % ${PRODUCTS} + 1
                where ${CHOSEN(sql, keys)} and not exists (select 1 from product_daily_costs e
                  where e.product_id = (d.product_id + ${shift}) % ${PRODUCTS} + 1 and e.cost_date = d.cost_date)`;
      return `move ${keys.ids.length} rows to other products`;
    }
    case 6: {
      const keys = await someKeys(sql, r, r.next() * 0.5);
      await sql`delete from product_daily_costs where ${CHOSEN(sql, keys)}`;
      return `delete ${keys.ids.length} rows`;
    }
    case 7: {
      const rows = randomRows(r, r.int(1, 300));
      await sql`delete from product_daily_costs where (product_id, cost_date) in
                (select * from unnest(${rows.map((d) => String(d.product_id))}::bigint[], ${rows.map((d) => d.cost_date)}::text[]::date[]))`;
      await bulkLoad(sql, rows, viaCopy);
      return `bulk load ${rows.length} rows`;
    }
    case 8:
      // An ETL reload: empty the table, bulk load it again, in one transaction or not.
      if (r.chance(0.5)) {
        await (sql as Pool).begin(async (tx) => {
          await tx`truncate product_daily_costs`;
          await bulkLoad(tx, randomRows(r, r.int(0, 900)), viaCopy);
        });
      } else {
        await sql`truncate product_daily_costs`;
        await bulkLoad(sql, randomRows(r, r.int(0, 900)), viaCopy);
      }
      return "truncate and reload";
    case 9:
      await sql`update product_daily_costs set purchase_cost_usd = purchase_cost_usd where product_id % 2 = 0`;
      return "update that changes nothing";
    case 10: {
      // Several writes in one transaction, then commit or roll back.
      const commit = r.chance(0.5);
      await (sql as Pool)
        .begin(async (tx) => {
          await insertRows(tx, randomRows(r, r.int(1, 40)), "update");
          await tx`delete from product_daily_costs where product_id = ${r.int(1, PRODUCTS)}`;
          await tx`update product_daily_costs set cost_date = cost_date + 1 where cost_date = ${isoDay(r.int(0, DAYS - 1))}::date
                     and product_id not in (select product_id from product_daily_costs where cost_date = ${isoDay(r.int(0, DAYS - 1))}::date)`.catch(
            () => {}, // a collision aborts the statement; the transaction is then rolled back below
          );
          if (!commit) throw new RollBack();
        })
        .catch((err) => {
          if (!(err instanceof RollBack) && !(err instanceof Error && /duplicate key|aborted/.test(err.message))) throw err;
        });
      return commit ? "transaction" : "rolled-back transaction";
    }
    case 13: {
      // A product deleted together with its daily rows, in one statement; then back, with none.
      const id = String(r.int(1, PRODUCTS));
      const [product] = await sql`select * from products where product_id = ${id}::bigint`;
      await sql`with gone as (delete from product_daily_costs where product_id = ${id}::bigint returning 1)
                delete from products where product_id = ${id}::bigint`;
      if (product) await sql`insert into products ${sql(product as Record<string, unknown>)}`;
      return `delete product ${id} with its daily rows`;
    }
    default: {
      // Products change too, in any isolation level: reads must show their current attributes.
      const ids = Array.from({ length: r.int(1, 8) }, () => String(r.int(1, PRODUCTS)));
      const change = r.int(0, 4);
      const isolation = r.pick(ISOLATION);
      await (sql as Pool).begin(`isolation level ${isolation}`, async (tx) => {
        if (change === 0) {
          await tx`update products set is_sample = not is_sample where product_id = any(${ids}::bigint[])`;
        } else if (change === 1) {
          await tx`update products set erp_sku = ${r.pick(["NEW", "SKU-A", "a", null])}::text,
                   erp_product_id = ${r.chance(0.3) ? null : String(r.int(1, 9) * 100)}::bigint where product_id = any(${ids}::bigint[])`;
        } else if (change === 2) {
          await tx`update products set product_name = ${r.pick(["Renamed", "", null, 'quote " and \\ backslash'])}::text where product_id = any(${ids}::bigint[])`;
        } else if (change === 3) {
          // MERGE fires the same statement triggers; and a product without daily rows changes its id.
          await tx`merge into products p using (select product_id, erp_sku from products where product_id = any(${ids}::bigint[])) s
                   on p.product_id = s.product_id
                   when matched then update set erp_sku = coalesce(s.erp_sku, '') || '-M', is_sample = not p.is_sample`;
          const id = 2000 + r.int(0, 10_000);
          await tx`insert into products (product_id, erp_sku) values (${id}, 'LONELY') on conflict do nothing`;
          await tx`update products set product_id = ${id + 20_000}, erp_sku = 'MOVED' where product_id = ${id}
                   and not exists (select 1 from products where product_id = ${id + 20_000})`;
        } else {
          // The ETL's product upsert: unchanged products, changed ones, and a brand-new one
          // (unless an earlier upsert drew the same id: one statement may not name a key twice).
          const fresh = 1000 + r.int(0, 10_000);
          await tx`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
                   select p.product_id, p.erp_product_id, case when p.product_id % 2 = 0 then p.erp_sku else 'UP-' || p.product_id end,
                          p.product_name, p.is_sample from products p
                   union all select ${fresh}, null, 'NEW-PRODUCT', null, false
                     where not exists (select 1 from products where product_id = ${fresh})
                   on conflict (product_id) do update set erp_sku = excluded.erp_sku`;
        }
      });
      return `update products (${change}) ${ids.join(",")} in ${isolation}`;
    }
  }
}

export class RollBack extends Error {}

/**
 * A range of any shape users ask: one day, whole months, a quarter or a year, and from any
 * day to any day: firsts and lasts of months, February 29, days before, after and around all
 * the data, across the year's end.
 */
export function randomRange(r: Rng): [string, string] {
  const day = () => {
    const k = r.int(0, 13);
    if (k < 2) return isoDay(r.int(-40, DAYS + 40)); // partly or wholly outside the data
    if (k === 2) return r.pick(["0001-01-01", "2019-06-15", "2031-12-31", "9999-12-31"]); // far before or after
    if (k === 3) return "2024-02-29";
    const d = isoDay(r.int(0, DAYS - 1));
    if (k < 6) return d.slice(0, 8) + "01"; // a first of the month
    if (k < 8) return new Date(Date.UTC(Number(d.slice(0, 4)), Number(d.slice(5, 7)), 0)).toISOString().slice(0, 10); // a last
    return d;
  };
  const a = day();
  const kind = r.int(0, 6);
  // Whole months, quarters and years are drawn around the data (a month after 9999-12 is no date).
  const near = a < "2000" || a > "2100" ? isoDay(r.int(0, DAYS - 1)) : a;
  if (kind === 0) return [a, a]; // one day
  if (kind === 1) {
    // whole months: first day .. last day of a later month
    const start = near.slice(0, 8) + "01";
    const end = new Date(Date.UTC(Number(near.slice(0, 4)), Number(near.slice(5, 7)) - 1 + r.int(1, 4), 0)).toISOString().slice(0, 10);
    return [start, end];
  }
  if (kind === 2) {
    // exactly one quarter or one year
    const year = Number(near.slice(0, 4));
    if (r.chance(0.5)) return [`${near.slice(0, 4)}-01-01`, `${near.slice(0, 4)}-12-31`];
    const q = Math.floor((Number(near.slice(5, 7)) - 1) / 3);
    const end = new Date(Date.UTC(year, q * 3 + 3, 0)).toISOString().slice(0, 10);
    return [`${near.slice(0, 4)}-${String(q * 3 + 1).padStart(2, "0")}-01`, end];
  }
  const b = day();
  return a <= b ? [a, b] : [b, a];
}

export const SEGMENTS = ["normal", "sample", "all"] as const;
