// Migration 0014 on a database an earlier build migrated and served: the notes' triggers fire
// in every session from then on, and every answer's version moves once (a write that a replica
// session made before it left no note, so an ETag from before may stand for sums it changed).
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { readAnswerVersion } from "../../src/reads/product-costs.ts";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { servedAndNaive } from "../support/rollup-oracle.ts";

describeWithPostgres("migration 0014 on a database at 0013", () => {
  const NAME = `pce_notes_always_${process.pid}`;
  let server: postgres.Sql;
  let admin: Sql;
  beforeAll(async () => {
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`create database ${NAME}`);
    const url = new URL(SERVER_URL);
    url.pathname = `/${NAME}`;
    admin = createPool({ url: url.toString(), max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60_000, readOnly: false, applicationName: "pce-notes-always" });
    await migrate(admin);
    await admin`insert into products select i, 100 + i, 'SKU-' || i, 'P' || i, false from generate_series(1, 20) i`;
    await admin`insert into product_daily_costs select p, d::date, p, 1, 2, 3 from generate_series(1, 20) p, generate_series('2026-09-01'::date, '2026-10-31'::date, '1 day') d`;
    await refreshRollup(admin);
    // As the 0013 build left it: the same rollup, its triggers ordinary ones, 0014 not applied.
    for (const [table, trigger] of [...["insert", "update", "delete", "truncate"].map((w) => ["product_daily_costs", `product_cost_deltas_on_${w}`]), ["products", "product_cost_deltas_on_product_update"]]) {
      await admin.unsafe(`alter table ${table} enable trigger ${trigger}`);
    }
    await admin`delete from schema_migrations where version = '0014'`;
  }, 60_000);
  afterAll(async () => {
    await admin.end({ timeout: 5 });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.end();
  });

  test("a replica session's write the old triggers missed: after 0014 every version has moved and, once refreshed, every answer is exact", async () => {
    await admin.begin(async (tx) => {
      await tx`set local session_replication_role = replica`;
      await tx`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1000 where product_id = 5 and cost_date = '2026-10-10'`;
    });
    // The 0013 build's view: no note, so the version did not move and the rollup is behind.
    expect((await admin<{ n: number }[]>`select count(*)::int as n from product_cost_deltas`)[0]).toEqual({ n: 0 });
    const ranges = [["2026-10-01", "2026-10-31"], ["2026-09-15", "2026-10-20"], ["2026-09-01", "2026-09-30"]] as const;
    const before = await Promise.all(ranges.map(([a, b]) => readAnswerVersion(admin, a, b)));

    expect(await migrate(admin)).toEqual(["0014"]);
    const after = await Promise.all(ranges.map(([a, b]) => readAnswerVersion(admin, a, b)));
    for (const [i, v] of after.entries()) expect(v.version).not.toBe(before[i]!.version);
    const triggers = await admin`select tgname, tgenabled from pg_trigger where tgname like 'product_cost_deltas_on_%' order by 1`;
    expect(triggers.map((t) => `${t.tgname} ${t.tgenabled}`)).toEqual(
      ["delete", "insert", "product_update", "truncate", "update"].map((w) => `product_cost_deltas_on_${w} A`),
    );
    // Exact at once (the note of everything: the daily rows), and after the refresh's rebuild.
    for (const refreshed of [false, true]) {
      if (refreshed) expect((await refreshRollup(admin))?.mode).toBe("rebuild");
      for (const [a, b] of ranges) {
        const [served, naive] = await servedAndNaive(admin, a, b);
        expect({ refreshed, a, b, served }).toEqual({ refreshed, a, b, served: naive });
      }
    }
  }, 60_000);
});
