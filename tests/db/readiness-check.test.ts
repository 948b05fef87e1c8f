// The readiness check against a real PostgreSQL, where a statement of it meets what is no
// fault of the database: a cancel sent for an earlier check's statement (its deadline's) that
// arrived after that statement ended, on the same pooled session. Ready all the same, once the
// statement is run again; a cancel every time is reported.
import { afterAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { checkReadiness } from "../../src/reads/readiness.ts";
import { servicePool } from "../support/database.ts";
import { testApp } from "../support/app.ts";
import { strayCancels } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("the readiness check on PostgreSQL", () => {
  const pools: Sql[] = [];
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end({ timeout: 5 })));
  });

  /** `sql` whose first `times` statements are cancelled in PostgreSQL instead of run, as a stray cancel does. */
  test("one stray cancel: ready, its statement run again; a cancel at every try: not ready, QUERY_FAILED", async () => {
    const sql = await servicePool({ max: 1 });
    pools.push(sql);
    expect(await checkReadiness(strayCancels(sql, () => true), 2000)).toEqual({ ready: true, source: { name: "rollup" } });
    const always = await checkReadiness(strayCancels(sql, () => true, 1000), 2000);
    expect(always).toMatchObject({ ready: false, problem: { code: "QUERY_FAILED" } });
  });

  test("shutting down, a check that fails on the pool being closed logs no 'database not ready'; otherwise it is logged once", async () => {
    const sql = await servicePool({ max: 1 });
    await sql.end({ timeout: 1 });
    let stopping = true;
    const app = testApp(sql, { stopping: () => stopping });
    expect((await app.get("/readyz")).status).toBe(503);
    expect(app.logs.filter((l) => l.level === "error")).toEqual([]);
    stopping = false;
    expect((await app.get("/readyz")).status).toBe(503);
    expect((await app.get("/readyz")).status).toBe(503);
    expect(app.logs.filter((l) => l.level === "error").map((l) => l.msg)).toEqual(["database not ready"]);
  });
});
