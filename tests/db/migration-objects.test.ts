// What `migrate` makes, as a DBA reads it before allowing it on the ETL's database (issue 44):
// src/rollup/migration-objects.ts names every object, and exactly those a migrated database holds
// (a migration that adds one fails here until it is named, with its purpose and what writers
// pay); `migrate --dry-run` names each one a database lacks; docs/database.md lists them all.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import postgres from "postgres";
import { readCommandLine } from "../../src/cli/command-line.ts";
import { commandNamed } from "../../src/cli/commands.ts";
import { runMigrate } from "../../src/cli/migrate.ts";
import { createPool, type Sql } from "../../src/database/client.ts";
import { currentDefinition, MIGRATION_OBJECTS, objectsToMake, schemaObjects } from "../../src/rollup/migration-objects.ts";
import { migrate, MIGRATIONS } from "../../src/rollup/migrations.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { testApp, type TestApp } from "../support/app.ts";
import { describeBackends } from "../support/backends.ts";
import { SERVER_URL } from "../support/database.ts";
import { memoryLogger } from "../support/memory-logger.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";
import { dumpSchema, SCHEMA_FILE } from "../support/schema-dump.ts";

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

describeWithPostgres("an object migrate made, dropped by hand, is made again by the next migrate (issue 52)", () => {
  const NAME = `pce_remake_${process.pid}`;
  const url = (() => {
    const u = new URL(SERVER_URL);
    u.pathname = "/" + NAME;
    return u.toString();
  })();
  let server: postgres.Sql;
  let admin: Sql;
  let service: Sql;
  let app: TestApp;
  beforeAll(async () => {
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`create database ${NAME}`);
    admin = createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-remake-test" });
    service = createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: true, applicationName: "pce-remake-test-service" });
    await migrate(admin);
    await admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample) select p, 500 + p, 'SKU-' || p, 'Product ' || p, p = 2 from generate_series(1, 4) p`;
    // Product 1 without the days from 11 February, for the tests' inserts.
    await admin`insert into product_daily_costs select p, d::date, 1.5, 2.25, 0.5, p from generate_series(1, 4) p, generate_series('2024-01-01'::date, '2024-03-31'::date, interval '1 day') d
                where not (p = 1 and d between '2024-02-11' and '2024-02-20')`;
    await refreshRollup(admin); // no note left waiting: each test's writes are the only ones
    app = testApp(service);
  });
  afterAll(async () => {
    await service.end({ timeout: 5 });
    await admin.end({ timeout: 5 });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.end();
  });

  /** `migrate` (with `--dry-run`) as the executable runs it: its own log lines, without their time. */
  async function runCli(...flags: string[]): Promise<Record<string, unknown>[]> {
    const logger = memoryLogger();
    await runMigrate(readCommandLine(flags, { DATABASE_URL: url }, commandNamed("migrate")), logger);
    return logger.lines.map(({ time: _, ...l }) => l).filter((l) => /^(pending migration|migrate would|nothing to migrate|migrations? )/.test(String(l.msg)));
  }
  /** /readyz's source (it checks again at once), and whether the rollup answers (with ETags), exactly: a calendar month's rendered answer and a sum over months. */
  async function source(): Promise<{ readyz: string; etag: boolean }> {
    const ready = (await (await app.get("/readyz", {})).json()) as { source?: string };
    let etag = true;
    for (const [from, to] of [["2024-02-01", "2024-02-29"], ["2024-01-01", "2024-04-30"]] as const) {
      const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=all`);
      expect([res.status, await res.text()]).toEqual([200, await naiveAnswer(admin, from, to, "all")]);
      etag &&= res.headers.has("etag");
    }
    return { readyz: ready.source ?? "rollup", etag };
  }
  let day = 10;

  const AT_0013 = { version: "0013", name: "months_window" };
  const AT_0006 = { version: "0006", name: "rollup_v3" };
  const AT_0014 = { version: "0014", name: "notes_always" };
  // [what is dropped, the steps that make it again, the objects `migrate --dry-run` says it would make]
  const cases: [string, Record<string, string>[], string[]][] = [
    ["drop function product_cost_answer_version(date, date)", [{ ...AT_0013, object: "function product_cost_answer_version" }], ["function product_cost_answer_version"]],
    ["drop trigger product_cost_deltas_on_insert on product_daily_costs", [{ ...AT_0014, object: "trigger product_cost_deltas_on_insert" }], ["trigger product_cost_deltas_on_insert"]],
    ["drop trigger product_cost_deltas_on_product_update on products", [{ ...AT_0014, object: "trigger product_cost_deltas_on_product_update" }], ["trigger product_cost_deltas_on_product_update"]],
    // A trigger there but not firing in every session (migration 0014) leaves writes unnoted as one dropped does.
    ["alter table product_daily_costs disable trigger product_cost_deltas_on_update", [{ ...AT_0014, object: "trigger product_cost_deltas_on_update" }], ["trigger product_cost_deltas_on_update"]],
    ["alter table products enable trigger product_cost_deltas_on_product_update", [{ ...AT_0014, object: "trigger product_cost_deltas_on_product_update" }], ["trigger product_cost_deltas_on_product_update"]],
    ["drop index product_daily_costs_cost_date_idx", [{ version: "0002", name: "daily_costs_by_date", object: "index product_daily_costs_cost_date_idx" }], ["index product_daily_costs_cost_date_idx"]],
    // A trigger's function with its trigger (cascade): the function first.
    [
      "drop function product_cost_deltas_of_truncate() cascade",
      [{ ...AT_0006, object: "function product_cost_deltas_of_truncate" }, { ...AT_0014, object: "trigger product_cost_deltas_on_truncate" }],
      ["trigger product_cost_deltas_on_truncate", "function product_cost_deltas_of_truncate"],
    ],
  ];
  test.each(cases)("%s: --dry-run names it, migrate makes it as sql/schema.sql has it, and the rollup answers again", async (drop, steps, made) => {
    expect(await source()).toEqual({ readyz: "rollup", etag: true });
    await admin.unsafe(drop);
    // A write of each kind, each on a product of its own (a note on a product's month makes the
    // refresh read it from the daily rows) and within the rollup's months (a write past them makes
    // it rebuild): the one a dropped trigger missed left no note, and must be counted all the same.
    day++;
    await admin`insert into product_daily_costs values (1, ${`2024-02-${day}`}, 7, 1, 1, 1)`;
    await admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where product_id = 2 and cost_date = ${`2024-03-${day}`}`;
    await admin`delete from product_daily_costs where product_id = 3 and cost_date = ${`2024-01-${day}`}`;
    await admin`update products set product_name = product_name || '+' where product_id = 4`;

    const dry = await runCli("--dry-run");
    expect(dry.map(({ msg, action, object, kind, name }) => ({ msg, action, object, kind, name }))).toEqual([
      ...steps.map((s) => ({ msg: "pending migration", action: "remake", object: s.object, kind: undefined, name: s.name })),
      ...made.map((o) => ({ msg: "migrate would make", action: undefined, object: undefined, kind: o.split(" ")[0], name: o.split(" ")[1] })),
      { msg: "migrate would apply these steps; nothing was changed", action: undefined, object: undefined, kind: undefined, name: undefined },
    ]);
    expect(dry.filter((l) => l.msg === "pending migration")).toEqual(steps.map((s) => ({ level: "info", msg: "pending migration", action: "remake", ...s })));
    expect(dry.at(-1)).toMatchObject({ pending: steps.length });
    // The refresh will not fold past it (a notes' trigger missing, writes go unnoted): it says what migrate would do.
    const said = steps.map((s) => `${s.version} (make again ${s.object})`).join(", ");
    await expect(refreshRollup(admin)).rejects.toThrow(`the database is not at this build's schema: \`migrate\` would apply ${said}, and then refresh; nothing was refreshed`);

    expect((await runCli()).find((l) => l.msg === "migrations applied")).toMatchObject({ applied: steps.map((s) => `${s.version} (made again ${s.object})`) });
    expect((await runCli("--dry-run")).map((l) => l.msg)).toEqual(["nothing to migrate"]);
    expect((await runCli()).find((l) => l.msg === "migrations applied")).toMatchObject({ applied: [] });
    expect(dumpSchema(url)).toBe(readFileSync(SCHEMA_FILE, "utf8"));
    expect(await source()).toEqual({ readyz: "rollup", etag: true });
  }, 60_000);

  // A table's restore runs its migration again; 0006 made the notes' functions as they were before
  // 0008 and 0012 changed them, and the months without 0011's partitions.
  test.each(["product_cost_answers", "product_cost_months", "product_cost_deltas"])(
    "drop table %s: migrate restores it, and every function as this build has it (a row past 294276 AD is still noted)",
    async (table) => {
      await admin.unsafe(`drop table ${table}`);
      await runCli();
      expect((await runCli("--dry-run")).map((l) => l.msg)).toEqual(["nothing to migrate"]);
      expect(dumpSchema(url)).toBe(readFileSync(SCHEMA_FILE, "utf8"));
      await admin`insert into product_daily_costs values (1, '300000-01-01', 1, 2, 3, 4)`;
      await admin`delete from product_daily_costs where cost_date = '300000-01-01'`;
      expect(await source()).toEqual({ readyz: "rollup", etag: true });
    },
    60_000,
  );
});

test("every object migrate makes other than a table has its definition in sql/schema.sql, to be made again from", () => {
  for (const o of MIGRATION_OBJECTS.filter((o) => o.kind !== "table")) expect(currentDefinition(`${o.kind} ${o.name}`)).toContain(o.name);
});

test("every table migrate makes is restored by a migration run again (or is migrate's own record)", () => {
  const restored = new Set(MIGRATIONS.flatMap((m) => m.restores ?? []));
  expect(MIGRATION_OBJECTS.filter((o) => o.kind === "table" && o.by !== "migrate" && !restored.has(o.name)).map((o) => o.name)).toEqual([]);
});

test("docs/database.md lists every object migrate makes", () => {
  const doc = readFileSync(resolve(import.meta.dir, "../../docs/database.md"), "utf8");
  const missing = MIGRATION_OBJECTS.filter((o) => !doc.includes(`\`${o.name}\``)).map((o) => o.name);
  expect(missing).toEqual([]);
});
