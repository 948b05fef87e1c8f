// What the project's migrations ask of the ETL and anyone else who writes the contract
// tables: nothing. Every write PostgreSQL accepts on the contract tables commits, at every
// isolation level, with no lock wait on the project's objects, and every answer is exact
// after it, whether a refresh ran since or not. Rollup v1 (migrations 0003 and 0004) failed
// each of these: a rename inside REPEATABLE READ or SERIALIZABLE was refused (0A000), a
// product deleted with its daily rows in one statement hit a NOT NULL violation, a NaN
// amount left NaN sums behind after it was corrected, and its FOR SHARE locks and upserts
// made concurrent writers wait on each other.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import type { Sql } from "../../src/database/client.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { servicePool, testDatabase } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { SEGMENTS } from "../support/random-writes.ts";
import { answerDrift, monthsDrift, naiveAnswer } from "../support/rollup-oracle.ts";

const PRODUCTS = 60;

/** Products 1..60 and a row per product and day from 2024-01-01 to 2024-03-31 (amounts vary by product and day). */
async function loadFixture(admin: Sql): Promise<void> {
  await admin`truncate product_daily_costs, products`;
  await admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
              select i, 1000 + i, 'SKU-' || lpad(i::text, 3, '0'), 'Product ' || i, i % 5 = 0 from generate_series(1, ${PRODUCTS}) i`;
  await admin`insert into product_daily_costs
              select p, d::date, p + extract(day from d) / 100.0, 1.5, case when p % 7 = 0 then null else 0.25 end, p * 0.001
              from generate_series(1, ${PRODUCTS}) p, generate_series('2024-01-01'::date, '2024-03-31'::date, interval '1 day') d`;
}

// A day, whole months (the totals' lookups), exact periods (rendered answers once refreshed),
// and ranges with days at either end.
const RANGES: [string, string][] = [
  ["2024-02-14", "2024-02-14"],
  ["2024-02-01", "2024-02-29"],
  ["2024-01-01", "2024-03-31"],
  ["2024-01-01", "2024-12-31"],
  ["2024-01-20", "2024-03-10"],
  ["2023-12-01", "2024-02-29"],
];

describeBackends("writes the contract allows, on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  beforeAll(async () => {
    db = await backend.open();
    app = testApp(db.service);
  });
  afterAll(async () => {
    await db.close();
  });

  /** Every range and segment through the app equals the GROUP BY, before and after a refresh. */
  async function expectExactAnswers(context: string): Promise<void> {
    for (const refreshed of [false, true]) {
      if (refreshed) await refreshRollup(db.admin);
      for (const [from, to] of RANGES) {
        for (const segment of SEGMENTS) {
          const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`);
          expect({ context, refreshed, from, to, segment, status: res.status, body: await res.text() }).toEqual({
            context, refreshed, from, to, segment, status: 200, body: await naiveAnswer(db.service, from, to, segment),
          });
        }
      }
    }
    expect({ context, totals: await monthsDrift(db.service), answers: await answerDrift(db.service) }).toEqual({ context, totals: [], answers: [] });
  }

  async function productOf(from: string, to: string, erpProductId: number): Promise<Record<string, unknown> | undefined> {
    const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=all`);
    const rows = (await res.json()) as Record<string, unknown>[];
    return rows.find((r) => r.erp_product_id === erpProductId);
  }

  test.each(["repeatable read", "serializable"])("a product renamed inside %s commits, and reads show the new name, refreshed or not", async (isolation) => {
    await loadFixture(db.admin);
    await refreshRollup(db.admin); // rendered answers that show the old name
    await db.admin.begin(`isolation level ${isolation}`, async (tx) => {
      await tx`update products set product_name = 'Renamed ' || product_id, erp_sku = 'NEW-' || product_id where product_id <= 3`;
    });
    expect(await productOf("2024-02-01", "2024-02-29", 1002)).toMatchObject({ erp_sku: "NEW-2", product_name: "Renamed 2" });
    await expectExactAnswers(`renamed in ${isolation}`);
  });

  test("a TRUNCATE and reload in one transaction leaves the note of everything alone (no note per row), a later write notes again, and reads stay exact", async () => {
    await loadFixture(db.admin);
    await refreshRollup(db.admin);
    const notes = async () => (await db.admin<{ product_id: string | null; month: Date | null }[]>`select product_id, month from product_cost_deltas order by 1, 2`).map((n) => [n.product_id, n.month?.toISOString().slice(0, 10) ?? null]);
    await db.admin.begin(async (tx) => {
      const rows = await tx`select * from product_daily_costs`;
      await tx`truncate product_daily_costs`;
      await tx`insert into product_daily_costs ${tx(rows as unknown as Record<string, unknown>[])}`;
      await tx`update product_daily_costs set warehouse_fees_usd = warehouse_fees_usd + 1 where product_id = 2`;
      await tx`delete from product_daily_costs where product_id = 3 and cost_date < '2024-02-01'`;
    });
    expect(await notes()).toEqual([[null, null]]);
    // The next transaction's write notes itself, as ever.
    await db.admin`update product_daily_costs set purchase_cost_usd = 7 where product_id = 4 and cost_date = '2024-01-15'`;
    expect(await notes()).toEqual([["4", "2024-01-01"], [null, null]]);
    await expectExactAnswers("reloaded, then a write"); // before and after a refresh
    // A TRUNCATE rolled back with its savepoint takes the flag with it.
    await db.admin.begin(async (tx) => {
      await tx.savepoint(async (sp) => {
        await sp`truncate product_daily_costs`;
        throw new Error("rolled back");
      }).catch(() => {});
      await tx`update product_daily_costs set purchase_cost_usd = 8 where product_id = 5 and cost_date = '2024-03-03'`;
    });
    expect(await notes()).toEqual([["5", "2024-03-01"]]);
    await expectExactAnswers("a write after a TRUNCATE rolled back");
  });

  test("a product deleted together with its daily rows in one statement (a CTE) commits, and reads no longer show it", async () => {
    await loadFixture(db.admin);
    await refreshRollup(db.admin);
    await db.admin`with gone as (delete from product_daily_costs where product_id = 7 returning 1)
                   delete from products where product_id = 7`;
    expect(await productOf("2024-01-01", "2024-03-31", 1007)).toBeUndefined();
    expect(await productOf("2024-01-01", "2024-03-31", 1008)).toBeDefined();
    await expectExactAnswers("deleted by CTE");
  });

  test("with ON DELETE CASCADE added to the contract's foreign key, deleting a product deletes its rows, and reads follow", async () => {
    await loadFixture(db.admin);
    await refreshRollup(db.admin);
    const cascade = async (on: boolean) => {
      await db.admin.unsafe(`alter table product_daily_costs drop constraint product_daily_costs_product_id_fkey,
        add constraint product_daily_costs_product_id_fkey foreign key (product_id) references products (product_id)${on ? " on delete cascade" : ""}`);
    };
    await cascade(true);
    try {
      await db.admin`delete from products where product_id in (8, 9)`;
      expect(await productOf("2024-01-01", "2024-03-31", 1008)).toBeUndefined();
      await expectExactAnswers("deleted by cascade");
    } finally {
      await cascade(false);
    }
  });

  test("a NaN amount is not costed: it counts as null in every sum, and correcting it restores exact sums with no rebuild", async () => {
    await loadFixture(db.admin);
    // Product 1 on one day, and product 2 on every day of February: all four amounts NaN.
    await db.admin`update product_daily_costs set purchase_cost_usd = 'NaN' where product_id = 1 and cost_date = '2024-02-10'`;
    await db.admin`update product_daily_costs set purchase_cost_usd = 'NaN', inbound_freight_usd = 'NaN', shipping_to_customer_usd = 'NaN', warehouse_fees_usd = 'NaN'
                   where product_id = 2 and cost_date between '2024-02-01' and '2024-02-29'`;
    await refreshRollup(db.admin);
    // February for product 1: 28 costed days of 1 + day/100 (the NaN day left out); product 2: nothing costed.
    const february1 = 28 + (29 * 30) / 2 / 100 - 0.1;
    expect(await productOf("2024-02-01", "2024-02-29", 1001)).toMatchObject({ purchase_cost_usd: Number(february1.toFixed(2)), inbound_freight_usd: 43.5 });
    expect(await productOf("2024-02-01", "2024-02-29", 1002)).toMatchObject({ purchase_cost_usd: null, inbound_freight_usd: null, shipping_to_customer_usd: null, warehouse_fees_usd: null });
    expect(await productOf("2024-02-10", "2024-02-10", 1001)).toMatchObject({ purchase_cost_usd: null, inbound_freight_usd: 1.5 });
    await expectExactAnswers("with NaN amounts");

    // Corrected, not refreshed: exact at once; then refreshed: the same, with no rebuild.
    await db.admin`update product_daily_costs set purchase_cost_usd = 1.1 where product_id = 1 and cost_date = '2024-02-10'`;
    await db.admin`delete from product_daily_costs where product_id = 2 and cost_date between '2024-02-01' and '2024-02-14'`;
    await db.admin`update product_daily_costs set purchase_cost_usd = 2, inbound_freight_usd = 2, shipping_to_customer_usd = 2, warehouse_fees_usd = 2
                   where product_id = 2 and cost_date between '2024-02-15' and '2024-02-29'`;
    expect(await productOf("2024-02-01", "2024-02-29", 1001)).toMatchObject({ purchase_cost_usd: Number((february1 + 1.1).toFixed(2)) });
    expect(await productOf("2024-02-01", "2024-02-29", 1002)).toMatchObject({ purchase_cost_usd: 30, warehouse_fees_usd: 30 });
    const report = await refreshRollup(db.admin);
    expect(report?.mode).toBe("changes");
    expect(await productOf("2024-01-01", "2024-03-31", 1002)).toMatchObject({ inbound_freight_usd: 31 * 1.5 + 30 + 31 * 1.5 });
    await expectExactAnswers("NaN corrected");
  });

  // A logical replication subscription's apply worker, and bulk loaders that skip foreign-key
  // checks, write with session_replication_role = replica, where PostgreSQL skips ordinary
  // triggers: before migration 0014 such writes left no note, and reads of the rollup answered
  // the old sums behind an unchanged ETag.
  test("writes in a session whose session_replication_role is replica are noted like any other: reads stay exact, before and after a refresh", async () => {
    await loadFixture(db.admin);
    await refreshRollup(db.admin);
    const before = await app.get("/external/v1/product-costs?month_from=2024-01-01&month_to=2024-03-31&segment=all");
    await before.arrayBuffer();
    await db.admin.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`insert into product_daily_costs values (1, '2024-02-29', 5, 5, 5, 5) on conflict (product_id, cost_date) do update set purchase_cost_usd = excluded.purchase_cost_usd + 100`;
      await tx`update product_daily_costs set inbound_freight_usd = inbound_freight_usd + 7 where product_id = 2 and cost_date between '2024-01-10' and '2024-01-20'`;
      await tx`delete from product_daily_costs where product_id = 3 and cost_date = '2024-03-05'`;
      await tx`update products set product_name = 'renamed under replication' where product_id = 4`;
    });
    // Its version moved with the write, so no 304 stands for the old sums.
    const after = await app.get("/external/v1/product-costs?month_from=2024-01-01&month_to=2024-03-31&segment=all", { authorization: `Bearer ${KEY}`, "if-none-match": before.headers.get("etag")! });
    expect(after.status).toBe(200);
    await after.arrayBuffer();
    await expectExactAnswers("written with session_replication_role = replica");
  });
});

const ISOLATION_LEVELS = ["read committed", "repeatable read", "serializable"] as const;

/** A promise and its resolve function. */
function gate(): { opened: Promise<void>; open(): void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describeWithPostgres("writers on PostgreSQL never wait on the project", () => {
  let admin: Sql;
  let url: string;
  let app: TestApp;
  let service: Sql;
  const sessions: postgres.Sql[] = [];
  beforeAll(async () => {
    const db = await testDatabase();
    admin = db.admin;
    url = db.url;
    service = await servicePool();
    app = testApp(service);
  });
  afterAll(async () => {
    await Promise.all(sessions.map((s) => s.end({ timeout: 5 })));
    await service.end({ timeout: 5 });
  });

  /** A writer's own session: any lock wait longer than a second fails its statement (55P03). */
  function writerSession(options: { default_transaction_isolation?: "repeatable read" } = {}): postgres.Sql {
    const s = postgres(url, { max: 1, onnotice: () => {}, connection: { application_name: "pce-writers-test", lock_timeout: 1000, ...options } });
    sessions.push(s);
    return s;
  }

  async function expectExact(context: string): Promise<void> {
    for (const [from, to] of RANGES) {
      const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=all`);
      expect({ context, from, to, body: await res.text() }).toEqual({ context, from, to, body: await naiveAnswer(admin, from, to, "all") });
    }
  }

  test("on a database whose default_transaction_isolation is repeatable read, renames, upserts and deletes commit", async () => {
    await loadFixture(admin);
    const writer = writerSession({ default_transaction_isolation: "repeatable read" });
    expect((await writer`show transaction_isolation`)[0]).toEqual({ transaction_isolation: "repeatable read" });
    await writer`update products set product_name = 'RR ' || product_id where product_id <= 10`;
    await writer`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (1, '2024-02-01', 9)
                 on conflict (product_id, cost_date) do update set purchase_cost_usd = excluded.purchase_cost_usd`;
    await writer`delete from product_daily_costs where product_id = 3 and cost_date < '2024-02-01'`;
    await expectExact("default isolation repeatable read");
  });

  test.each(ISOLATION_LEVELS)(
    "six writers in %s, each holding its transaction open over the same products and months, never wait; a refresh meanwhile neither",
    async (isolation) => {
      await loadFixture(admin);
      await refreshRollup(admin);
      const firstWritesDone = Array.from({ length: 6 }, gate);
      const secondWritesDone = Array.from({ length: 6 }, gate);
      const commit = gate();

      // Every writer touches all 60 products, in the same months, through every kind of
      // write; their rows are their own (the contract's row locks are the ETL's business).
      // In SERIALIZABLE, only inserts: six transactions that also update and delete by key
      // on the same index pages fail among themselves on the contract tables alone (5 of 6
      // with 40001, measured), which is PostgreSQL's doing and the ETL's to retry.
      const write = async (tx: postgres.TransactionSql, w: number, round: number) => {
        const day = `2024-04-${String(1 + w * 2 + round).padStart(2, "0")}`; // a new day per writer and round
        await tx`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, warehouse_fees_usd)
                 select p, ${day}::date, p, 0.5 from generate_series(1, ${PRODUCTS}) p`;
        if (isolation === "serializable") return;
        await tx`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd)
                 select p, ${`2024-02-${10 + round}`}::date, 100 + ${w} from generate_series(1, ${PRODUCTS}) p where p % 6 = ${w}
                 on conflict (product_id, cost_date) do update set purchase_cost_usd = excluded.purchase_cost_usd`;
        await tx`delete from product_daily_costs where product_id % 6 = ${w} and cost_date = ${`2024-03-${10 + round}`}::date`;
        await tx`update products set product_name = ${`Writer ${w} round ${round}`} where product_id % 6 = ${w}`;
      };

      const failures: string[] = [];
      const writers = Array.from({ length: 6 }, async (_, w) => {
        const session = writerSession();
        try {
          await session.begin(`isolation level ${isolation}`, async (tx) => {
            await write(tx, w, 0);
            firstWritesDone[w]!.open();
            await Promise.all(firstWritesDone.map((g) => g.opened)); // all six transactions are open and have written
            await write(tx, w, 1);
            secondWritesDone[w]!.open();
            await commit.opened;
          });
        } catch (err) {
          failures.push(`writer ${w}: ${(err as { code?: string }).code} ${(err as Error).message}`);
          firstWritesDone[w]!.open();
          secondWritesDone[w]!.open();
        }
      });

      await Promise.all(secondWritesDone.map((g) => g.opened));
      // Six transactions hold their writes open: a refresh folds in what is committed and
      // leaves their notes for the next one, without waiting for them.
      const refreshed = await Promise.race([
        refreshRollup(admin, { wait: false }).then(() => "refreshed"),
        new Promise<string>((resolve) => setTimeout(() => resolve("the refresh waited on the writers"), 20_000)),
      ]);
      await expectExact(`${isolation}: writers open`);
      commit.open();
      await Promise.all(writers);

      expect({ isolation, failures, refreshed }).toEqual({ isolation, failures: [], refreshed: "refreshed" });
      await expectExact(`${isolation}: committed, not refreshed`);
      await refreshRollup(admin);
      expect({ totals: await monthsDrift(admin), answers: await answerDrift(admin) }).toEqual({ totals: [], answers: [] });
      await expectExact(`${isolation}: refreshed`);
    },
    60_000,
  );
});
