// A write that commits inside a rebuild's first transaction, between the statement that finds
// the window of months from the data (window.sql) and the one that forgets the notes outside it
// (notes_outside.sql). Run at READ COMMITTED, the two statements saw two states: the window and
// its nearest month outside were found without the new month's row, and then that row's note
// was forgotten as one outside the window. Nothing then knew of a row outside the window, so the
// next refresh widened the window over that month without rebuilding: the row was in neither
// the months nor the days read outside the window, and every range over it lacked it, behind
// the same version (the note had been counted as folded). Seen once in CI as
// tests/http/writers-readers-refresh.test.ts's wrong 200s and 304s on the one range that spans
// the new months. The write is not left to chance here: the rebuild is held before that
// statement until the write has committed.
import { beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { productCostRowsIn } from "../../src/reads/product-costs.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import lockRollupRead from "../../sql/queries/lock_rollup_read.sql" with { type: "text" };
import notesOutsideSql from "../../sql/refresh/notes_outside.sql" with { type: "text" };
import { testDatabase, type TestDatabase } from "../support/database.ts";
import { loadDenseFixture } from "../support/fixtures.ts";
import { heldBefore } from "../support/interleave.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import naiveQuery from "./naive_product_costs.sql" with { type: "text" };

describeWithPostgres("a write between a rebuild's finding of the window and its forgetting of the notes outside it", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await testDatabase();
    // Every day of January to March 2026: the window is those three months.
    await loadDenseFixture(db.admin, { products: 6, from: "2026-01-01", to: "2026-03-31" });
    await refreshRollup(db.admin, { rebuild: true });
  }, 60_000);

  /** The rows of [from, to] as the rollup reads them and as the GROUP BY does, in one snapshot. */
  const both = (from: string, to: string) =>
    db.admin.begin("isolation level repeatable read read only", async (tx) => {
      await tx.unsafe(lockRollupRead);
      const read = await productCostRowsIn(tx as unknown as Sql, { monthFrom: from, monthTo: to, segment: "all" });
      const naive = (await tx.unsafe(naiveQuery, [from, to, "all"]).raw()) as unknown as Buffer[][];
      const text = (rows: readonly (readonly (Uint8Array | null)[])[]) => rows.map((r) => r.map((c) => (c === null ? null : Buffer.from(c).toString())));
      return { read: text(read), naive: text(naive) };
    });

  test("the next month's first row, written then, is in every range over it after the next refresh widens the window", async () => {
    let written = false;
    const rebuilding = heldBefore(db.admin, notesOutsideSql, async () => {
      if (written) return;
      written = true;
      // The ETL's next month, committed while the rebuild's first transaction runs.
      await db.admin`insert into product_daily_costs values (1, '2026-04-01', 10, 20, 30, 40)`;
    });
    await refreshRollup(rebuilding, { rebuild: true });
    expect(written).toBe(true);
    // The month after: the next refresh widens the window over April and May.
    await db.admin`insert into product_daily_costs values (2, '2026-05-01', 1, 2, 3, 4)`;
    await refreshRollup(db.admin);
    const [window] = await db.admin`select window_first::text as first, window_last::text as last from product_cost_refreshes`;
    expect(window).toEqual({ first: "2026-01-01", last: "2026-05-01" });
    for (const [from, to] of [
      ["2026-02-10", "2027-12-31"],
      ["2026-03-20", "2026-04-02"],
      ["2026-04-01", "2026-04-30"],
    ] as const) {
      // (April's one row is product 1's: the range of April alone has exactly it.)
      const { read, naive } = await both(from, to);
      expect({ range: `${from}..${to}`, rows: read }).toEqual({ range: `${from}..${to}`, rows: naive });
    }
    expect((await both("2026-04-01", "2026-04-30")).naive.map((row) => row.slice(3))).toEqual([["10", "20", "30", "40"]]);
  }, 60_000);
});
