// What `migrate` makes, as a DBA reads it before allowing it on the ETL's database (issue 44):
// src/db/migration-objects.ts names every object, and exactly those a migrated database holds
// (a migration that adds one fails here until it is named, with its purpose and what writers
// pay); `migrate --dry-run` names each one a database lacks; docs/database.md lists them all.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/db/client.ts";
import { MIGRATION_OBJECTS, objectsToMake, schemaObjects } from "../../src/db/migration-objects.ts";
import { MIGRATIONS } from "../../src/db/migrations.ts";
import { describeBackends } from "../support/backends.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const named = MIGRATION_OBJECTS.map((o) => ({ kind: o.kind, name: o.name, on_table: o.on ?? "" })).sort((a, b) => `${a.kind} ${a.name}`.localeCompare(`${b.kind} ${b.name}`, "en"));

describeBackends("the objects migrate makes, on $name", (backend) => {
  test("a migrated database holds exactly the objects named, on the tables named", async () => {
    const db = await backend.open();
    try {
      const held = (await schemaObjects(db.service)).map((o) => ({ ...o })).sort((a, b) => `${a.kind} ${a.name}`.localeCompare(`${b.kind} ${b.name}`, "en"));
      expect(held).toEqual(named);
      expect(await objectsToMake(db.service)).toEqual([]);
    } finally {
      await db.close();
    }
  });
});

describeWithPostgres("migrate --dry-run on the ETL's database", () => {
  const NAME = `pce_objects_${process.pid}`;
  let server: postgres.Sql;
  let sql: Sql;
  beforeAll(async () => {
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`create database ${NAME}`);
    const u = new URL(SERVER_URL);
    u.pathname = "/" + NAME;
    sql = createPool({ url: u.toString(), max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-objects-test" });
    await sql.unsafe(MIGRATIONS.find((m) => m.version === "0001")!.sql);
  });
  afterAll(async () => {
    await sql.end({ timeout: 5 });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.end();
  });

  test("the contract's tables alone: every object is to be made, each with its purpose, and those on the ETL's tables with what writers pay", async () => {
    const toMake = await objectsToMake(sql);
    expect(toMake).toEqual([...MIGRATION_OBJECTS]);
    const onTheEtls = toMake.filter((o) => o.on === "products" || o.on === "product_daily_costs");
    expect(onTheEtls.map((o) => `${o.kind} ${o.name} on ${o.on}`)).toEqual([
      "index product_daily_costs_cost_date_idx on product_daily_costs",
      "trigger product_cost_deltas_on_insert on product_daily_costs",
      "trigger product_cost_deltas_on_update on product_daily_costs",
      "trigger product_cost_deltas_on_delete on product_daily_costs",
      "trigger product_cost_deltas_on_truncate on product_daily_costs",
      "trigger product_cost_deltas_on_product_update on products",
    ]);
    for (const o of onTheEtls) expect(o.writerCost).toMatch(/µs|index entry/);
    for (const o of MIGRATION_OBJECTS) expect(o.purpose.length).toBeGreaterThan(5);
  });
});

test("docs/database.md lists every object migrate makes", () => {
  const doc = readFileSync(resolve(import.meta.dir, "../../docs/database.md"), "utf8");
  const missing = MIGRATION_OBJECTS.filter((o) => !doc.includes(`\`${o.name}\``)).map((o) => o.name);
  expect(missing).toEqual([]);
});
