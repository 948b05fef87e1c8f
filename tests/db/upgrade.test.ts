// The upgrade to rollup v3 (0006 and its first refresh) from the releases before it: rollup
// v2 (a database at 0005) and rollup v1 (at 0004, its triggers having kept
// product_period_costs), populated, as `migrate` runs it, while the new service answers:
// every answer is exactly the GROUP BY's or a 503 (logged as MIGRATIONS_PENDING); never a
// wrong sum, never a 500. Afterwards the old objects are gone, the months and rendered
// answers are what the daily rows say, writes go on, and a serving role made by the old
// release's read-only-role script reads the new tables without a new GRANT.
// Then a rollup table dropped by hand: reads answer 503 naming the cause, and `migrate`
// makes it again.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate, MIGRATIONS, plannedMigrations } from "../../src/rollup/migrations.ts";
import { checkReadiness } from "../../src/reads/readiness.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { testApp, type TestApp } from "../support/app.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { SEGMENTS } from "../support/random-writes.ts";
import { answerDrift, monthsDrift, naiveAnswer } from "../support/rollup-oracle.ts";

const V2_TABLES = "products, product_daily_costs, product_month_costs, product_cost_answers, product_cost_changes, schema_migrations";
const RANGES: [string, string][] = [
  ["2024-02-14", "2024-02-14"],
  ["2024-02-01", "2024-02-29"],
  ["2024-04-01", "2024-06-30"],
  ["2024-01-01", "2024-12-31"],
  ["2023-11-05", "2025-01-20"],
  ["2024-03-15", "2024-09-14"],
];

for (const { from, release } of [
  { from: "0005", release: "v2" },
  { from: "0004", release: "v1" },
])
describeWithPostgres(`the rollup's schema: upgraded from ${release} (${from}) on a populated database, restored after a table is dropped`, () => {
  const NAME = `pce_upgrade_${from}_${process.pid}`;
  const READER = `pce_upgrade_reader_${from}_${process.pid}`;
  let admin: Sql;
  let service: Sql;
  let app: TestApp;
  const url = (() => {
    const u = new URL(SERVER_URL);
    u.pathname = "/" + NAME;
    return u.toString();
  })();

  beforeAll(async () => {
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`create database ${NAME}`);
    await server.end();
    admin = createPool({ url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-upgrade-test" });
    service = createPool({ url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: true, applicationName: "pce-upgrade-test-service" });
    app = testApp(service);
  });
  afterAll(async () => {
    await service.end({ timeout: 5 });
    await admin.end({ timeout: 5 });
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`drop role if exists ${READER}`);
    await server.end();
  });

  async function answer(from: string, to: string, segment: string): Promise<{ status: number; body: string }> {
    return (await sourced(from, to, segment)).got;
  }
  /** The answer, and its source: the rollup's 200 has an ETag, the daily rows' none. */
  async function sourced(from: string, to: string, segment: string) {
    const res = await app.get(`/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`);
    return { got: { status: res.status, body: await res.text() }, source: res.headers.has("etag") ? "rollup" : "daily" };
  }
  /** /readyz, which checks the source again at once (requests do every few seconds): its status, and the source it names (none: the rollup). */
  async function readyz(): Promise<{ status: number; detail: string; source: string; why?: string }> {
    const res = await app.get("/readyz", {});
    const body = (await res.json()) as { detail: string; source?: string; why?: string };
    return { status: res.status, detail: body.detail, source: body.source ?? "rollup", ...(body.why ? { why: body.why } : {}) };
  }

  test("no wrong answer at any moment of the upgrade, and exact months and answers after it", async () => {
    // As the previous release left it: 0001..0004 or 0001..0005, 300 products, 15 months of
    // daily rows written through its triggers (some amounts NaN, which v1 summed as NaN), its
    // refresh run (v2), and its serving role made by its read-only-role script.
    const old = MIGRATIONS.filter((m) => m.version <= from);
    expect(await migrate(admin, old)).toEqual(old.map((m) => m.version));
    await admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
                select i, 5000 + i, 'SKU-' || (i % 97), 'Product ' || i, i % 4 = 0 from generate_series(1, 300) i`;
    await admin`insert into product_daily_costs
                select p, d::date, round((p * 7 + extract(doy from d)) % 101 / 3.0, 6), case when p % 11 = 0 then null else 2.25 end, 0.5, p * 0.01
                from generate_series(1, 300) p, generate_series('2023-11-01'::date, '2025-01-31'::date, interval '1 day') d
                where (p + extract(doy from d)::int) % 3 <> 0`;
    await admin`update product_daily_costs set warehouse_fees_usd = 'NaN' where product_id = 5 and cost_date = '2024-02-14'`;
    if (from === "0004") {
      const [v1] = await admin<{ n: number }[]>`select count(*)::int as n from product_period_costs`;
      expect(v1!.n).toBeGreaterThan(1000);
    } else {
      // v2's log, as its triggers kept it (its refresh is gone from this build).
      const [v2] = await admin<{ n: number }[]>`select count(*)::int as n from product_cost_changes`;
      expect(v2!.n).toBeGreaterThan(1000);
      await admin.unsafe(`create role ${READER} login; grant select on ${V2_TABLES} to ${READER}`);
    }

    const expected = new Map<string, string>();
    for (const [from, to] of RANGES) for (const segment of SEGMENTS) expected.set(`${from} ${to} ${segment}`, await naiveAnswer(admin, from, to, segment));

    // The new service against the old schema: the daily rows, exact, and said.
    expect(await sourced("2024-02-01", "2024-02-29", "all")).toEqual({ got: { status: 200, body: expected.get("2024-02-01 2024-02-29 all")! }, source: "daily" });
    expect(app.logs.at(-1)).toMatchObject({ status: 200, source: "daily" });
    const pending = from === "0004" ? "migrations 0005 to 0014" : "migrations 0006 to 0014";
    expect(app.logs.find((l) => l.msg === "reading the daily rows directly")).toMatchObject({ level: "warn", why: `${pending} of this build are not applied` });
    expect(await readyz()).toEqual({ status: 200, detail: "READY", source: "daily rows", why: `${pending} of this build are not applied` });

    // Readers all along: each answer exact, from either source.
    const wrong: unknown[] = [];
    const seen = { exact: 0, rollup: 0, daily: 0 };
    const check = async (i: number) => {
      const [from, to] = RANGES[i % RANGES.length]!;
      const segment = SEGMENTS[i % SEGMENTS.length]!;
      const { got, source } = await sourced(from, to, segment);
      if (got.status === 200 && got.body === expected.get(`${from} ${to} ${segment}`)) {
        seen.exact++;
        seen[source as "rollup" | "daily"]++;
      } else wrong.push({ from, to, segment, ...got, body: got.body.slice(0, 300) });
    };
    let upgrading = true;
    const readers = Array.from({ length: 3 }, async (_, r) => {
      for (let i = r; upgrading; i += 3) await check(i);
    });

    // What `migrate` does: the pending migrations in one transaction, then the first refresh.
    // (The readers stop whatever happens: a failure here must not leave them spinning.)
    let report: Awaited<ReturnType<typeof refreshRollup>>;
    try {
      expect(await migrate(admin)).toEqual(from === "0004" ? ["0005", "0006", "0007", "0008", "0009", "0010", "0011", "0012", "0013", "0014"] : ["0006", "0007", "0008", "0009", "0010", "0011", "0012", "0013", "0014"]);
      // Committed: the next check (a request's every few seconds, or this one) takes the rollup.
      expect(await readyz()).toEqual({ status: 200, detail: "READY", source: "rollup" });
      expect(app.logs.find((l) => l.msg === "reading the rollup")).toMatchObject({ level: "info", was: `${pending} of this build are not applied` });
      // Migrated, not yet refreshed: nothing is materialized, the log names everything, and
      // every read adds up the daily rows.
      const allRanges = async () => {
        for (let i = 0; i < RANGES.length * SEGMENTS.length; i++) await check(i);
      };
      const exactBefore = seen.exact;
      await allRanges();
      expect(seen.exact - exactBefore).toBeGreaterThanOrEqual(RANGES.length * SEGMENTS.length);
      report = await refreshRollup(admin);
      await allRanges();
    } finally {
      upgrading = false;
      await Promise.all(readers);
    }

    expect({ wrong }).toEqual({ wrong: [] });
    expect(seen.daily).toBeGreaterThan(0);
    expect(seen.rollup).toBeGreaterThanOrEqual(2 * RANGES.length * SEGMENTS.length);
    expect(report?.mode).toBe("rebuild");
    expect(report?.answers).toBeGreaterThan(0);

    const [left] = await admin<{ tables: string[] }[]>`
      select array_agg(c.relname::text order by c.relname) as tables from pg_class c
      where c.relnamespace = 'public'::regnamespace and c.relkind in ('r', 'p') and not c.relispartition and c.relname like 'product%'`;
    expect(left!.tables).toEqual(["product_cost_answers", "product_cost_deltas", "product_cost_folded_changes", "product_cost_months", "product_cost_refreshes", "product_daily_costs", "products"]);
    const [triggers] = await admin<{ names: string[] }[]>`
      select array_agg(tgname::text order by tgname) as names from pg_trigger where not tgisinternal`;
    expect(triggers!.names.every((n) => n.startsWith("product_cost_deltas_on_"))).toBe(true);
    expect({ months: await monthsDrift(service), answers: await answerDrift(service) }).toEqual({ months: [], answers: [] });

    if (from === "0005") {
      // The old release's serving role reads the new tables: its grants came along.
      const reader = new URL(url);
      reader.username = READER;
      const readerPool = createPool({ url: reader.toString(), max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: true, applicationName: "pce-upgrade-reader" });
      try {
        const readerApp = testApp(readerPool);
        const res = await readerApp.get("/external/v1/product-costs?month_from=2024-03-15&month_to=2024-09-14&segment=all");
        expect({ status: res.status, body: await res.text() }).toEqual({ status: 200, body: await naiveAnswer(admin, "2024-03-15", "2024-09-14", "all") });
        expect(await checkReadiness(readerPool, 2000)).toEqual({ ready: true, source: { name: "rollup" } });
        expect(res.headers.has("etag")).toBe(true);
      } finally {
        await readerPool.end({ timeout: 5 });
      }
    }

    // The NaN that v1 kept in its sums for good: corrected now, exact at once.
    await admin`update product_daily_costs set warehouse_fees_usd = 1 where product_id = 5 and cost_date = '2024-02-14'`;
    for (const segment of SEGMENTS) {
      expect(await answer("2024-02-01", "2024-02-29", segment)).toEqual({ status: 200, body: await naiveAnswer(admin, "2024-02-01", "2024-02-29", segment) });
    }
  }, 120_000);

  // (product_cost_refreshes is restored the same way.)
  test.each(["product_cost_months", "product_cost_answers", "product_cost_deltas"])(
    "%s dropped by hand: reads go on from the daily rows, exact, and /readyz says why; migrate makes it again and the rollup answers",
    async (table) => {
      // The choice checked just now: no background check (one is due every RECHECK_MS) runs
      // across the drop, which would find the table missing before a read meets it.
      expect(await readyz()).toEqual({ status: 200, detail: "READY", source: "rollup" });
      expect((await sourced("2024-02-01", "2024-02-29", "all")).source).toBe("rollup");
      await admin.unsafe(`drop table ${table}`);
      // The very next read meets the table gone: read again from the daily rows, no 503.
      for (const segment of SEGMENTS) {
        expect(await sourced("2024-02-01", "2024-02-29", segment)).toEqual({ got: { status: 200, body: await naiveAnswer(admin, "2024-02-01", "2024-02-29", segment) }, source: "daily" });
      }
      expect(app.logs.filter((l) => l.msg === "database not usable")).toEqual([]);
      expect(app.logs.findLast((l) => l.msg === "reading the daily rows directly")).toMatchObject({ level: "warn", why: expect.stringContaining(`"${table}" does not exist`) });
      const why = `the rollup's ${table} is missing`;
      expect(await readyz()).toEqual({ status: 200, detail: "READY", source: "daily rows", why });
      expect(await checkReadiness(service, 2000)).toEqual({ ready: true, source: { name: "daily", why } });

      // --dry-run names the steps and changes nothing.
      const restore = (version: string, name: string, tables: string[]) => ({ version, name, action: "restore" as const, tables });
      const remake = (version: string, name: string, object: string) => ({ version, name, action: "remake" as const, object });
      const steps = [
        restore("0006", "rollup_v3", [table]),
        // The log's change time (0007's column) comes back with the log; the months' partitions, with 0011.
        ...(table === "product_cost_deltas" ? [restore("0007", "answer_versions", ["product_cost_deltas.noted_at"])] : []),
        ...(table === "product_cost_months" ? [restore("0011", "months_by_month", [table])] : []),
        // 0006 run again made the notes' functions as they were before 0008 and 0012: made again as they are now.
        ...["product_cost_deltas_of_insert", "product_cost_deltas_of_update", "product_cost_deltas_of_delete", "product_cost_changes_everything"].map((f) => remake("0008", "refresh_record", `function ${f}`)),
        remake("0012", "notes_of_any_date", "function product_cost_deltas_note"),
        // ... and its triggers as ordinary ones: made again enabled always (0014).
        ...["product_cost_deltas_on_insert", "product_cost_deltas_on_update", "product_cost_deltas_on_delete", "product_cost_deltas_on_truncate", "product_cost_deltas_on_product_update"].map((t) =>
          remake("0014", "notes_always", `trigger ${t}`),
        ),
      ];
      expect(await plannedMigrations(admin)).toEqual(steps);
      expect(await plannedMigrations(admin)).toEqual(steps);
      const reported: unknown[] = [];
      expect(await migrate(admin, MIGRATIONS, { onStepStart: (s) => reported.push(["start", s]), onStepDone: (s, ms) => reported.push(["done", s, ms >= 0]) })).toEqual(
        steps.map((s) => (s.action === "restore" ? `${s.version} (restored ${s.tables.join(", ")})` : `${s.version} (made again ${s.object})`)),
      );
      expect(reported).toEqual(steps.flatMap((s) => [["start", s], ["done", s, true]]));
      expect(await plannedMigrations(admin)).toEqual([]);
      expect(await readyz()).toEqual({ status: 200, detail: "READY", source: "rollup" });
      // Restored and noted as "everything": exact at once, the rollup adding up the daily rows, then refreshed.
      for (const segment of SEGMENTS) {
        expect(await sourced("2024-02-01", "2024-02-29", segment)).toEqual({ got: { status: 200, body: await naiveAnswer(admin, "2024-02-01", "2024-02-29", segment) }, source: "rollup" });
      }
      expect((await refreshRollup(admin))?.mode).toBe("rebuild");
      expect({ months: await monthsDrift(service), answers: await answerDrift(service) }).toEqual({ months: [], answers: [] });
      for (const [first, last] of RANGES) {
        expect(await answer(first, last, "all")).toEqual({ status: 200, body: await naiveAnswer(admin, first, last, "all") });
      }
      expect(await migrate(admin)).toEqual([]);
    },
    // A migrate, a rebuild and a dozen reads: 4-5 s on a 2-core machine, a hang's limit, not a speed target.
    60_000,
  );
});
