// The executable with no database server: embedded demo data in memory, and an operator's
// own data in a --data-dir loaded with load-csv, migrated, served and restarted.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { openEmbedded } from "../../src/backends/embedded/embedded.ts";
import { cleanEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { writeFixtureCsv } from "../support/csv-fixture.ts";
import { DAILY, JANUARY_ALL, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";

const KEY = "embedded-e2e-key";
let bin: { dir: string; path: string };
beforeAll(() => {
  bin = isolatedBinary();
});

function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const r = Bun.spawnSync([bin.path, ...args], { env: cleanEnv(env), cwd: bin.dir, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const get = (server: RunningBinary, query: string) =>
  fetch(`${server.url}/external/v1/product-costs?${query}`, { headers: { authorization: `Bearer ${KEY}` } });

describe("embedded demo data, the default", () => {
  let server: RunningBinary;
  // The executable's own temp dir, where its embedded database's socket lives.
  const tmp = mkdtempSync(join(tmpdir(), "pce-e2e-tmp-"));
  beforeAll(async () => {
    server = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY, TMPDIR: tmp }, [], bin.dir);
  });
  afterAll(async () => {
    await server.stop();
  });

  test("the startup log says plainly that it serves embedded demo data, in memory", async () => {
    expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({
      database: "embedded PostgreSQL (PGlite) in memory, new database with demo data",
    });
    expect(await server.waitForLine((l) => l.msg === "serving embedded demo data")).toMatchObject({
      level: "warn",
      where: "in memory, gone at exit",
    });
  });

  test("serves demo rows for the last month with a copy of the executable alone in an empty directory", async () => {
    const today = new Date().toISOString().slice(0, 10);
    const monthAgo = new Date(Date.now() - 30 * 86400_000).toISOString().slice(0, 10);
    const res = await get(server, `month_from=${monthAgo}&month_to=${today}&segment=all`);
    expect(res.status).toBe(200);
    const rows = (await res.json()) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(250);
    expect(rows.some((r) => r.erp_sku === null)).toBe(true);
    expect(rows.some((r) => r.product_name === null)).toBe(true);
    expect(rows.every((r) => Object.keys(r).length === 7)).toBe(true);
  });

  test("every answer says it is a demo (X-Demo-Data: true), whatever its status", async () => {
    const answers = [
      await get(server, "month_from=2026-01-01&month_to=2026-01-31"),
      await fetch(`${server.url}/external/v1/product-costs?month_from=2026-01-01&month_to=2026-01-31`),
      await fetch(`${server.url}/healthz`),
      await fetch(`${server.url}/no/such/path`),
    ];
    expect(answers.map((r) => [r.status, r.headers.get("x-demo-data")])).toEqual([
      [200, "true"],
      [401, "true"],
      [200, "true"],
      [404, "true"],
    ]);
  });

  test("its sessions are read-only and readyz reports the database ready", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect([res.status, await res.text()]).toEqual([200, '{"detail":"READY","data":"demo"}']);
    // A write through the executable's own socket (its sessions are one PGlite session) is refused.
    const socketDir = readdirSync(tmp).find((d) => d.startsWith("pce-embedded-"));
    expect(socketDir).toBeDefined();
    const sql = postgres({ path: join(tmp, socketDir!, ".s.PGSQL.5432"), max: 1, onnotice: () => {} });
    try {
      const before = await sql`select count(*)::int as n from products`;
      const error = await sql`insert into products (product_id) values (987654321)`.catch((e) => e);
      expect([error.code, error.message]).toEqual(["25006", "cannot execute INSERT in a read-only transaction"]);
      expect(await sql`select count(*)::int as n from products`).toEqual(before);
    } finally {
      await sql.end({ timeout: 2 });
    }
  });
});

describe("failing closed: demo data only when asked for or run by hand", () => {
  test.each([
    ["under systemd (INVOCATION_ID) with no database", { INVOCATION_ID: "0123456789abcdef" },
      "no database configured: set DATABASE_URL (your PostgreSQL), or DATA_DIR for the embedded database; DEMO_DATA=true serves made-up demo costs on purpose"],
    ["under systemd (NOTIFY_SOCKET) with no database", { NOTIFY_SOCKET: "/run/systemd/notify" },
      "no database configured: set DATABASE_URL (your PostgreSQL), or DATA_DIR for the embedded database; DEMO_DATA=true serves made-up demo costs on purpose"],
    ["with DEMO_DATA=false and no database", { DEMO_DATA: "false" },
      "DEMO_DATA=false and no database: set DATABASE_URL (your PostgreSQL) or DATA_DIR (the embedded database, kept on disk)"],
  ])("%s: exit 2 and one line saying what to set", (_, env, message) => {
    expect(run(["serve"], { PRODUCT_COST_API_KEYS: KEY, PORT: "0", ...env })).toEqual({ code: 2, stdout: "", stderr: `product-cost-export: ${message}\n` });
  });

  test("under systemd, DEMO_DATA=true serves the demo on purpose and says so", async () => {
    const demo = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY, INVOCATION_ID: "0123456789abcdef", DEMO_DATA: "true" }, [], bin.dir);
    try {
      const res = await fetch(`${demo.url}/readyz`);
      expect([res.status, res.headers.get("x-demo-data"), await res.text()]).toEqual([200, "true", '{"detail":"READY","data":"demo"}']);
    } finally {
      await demo.stop();
    }
  });

  test("migrate with no database to change: exit 2", () => {
    expect(run(["migrate"])).toEqual({ code: 2, stdout: "", stderr: "product-cost-export: migrate needs a database to change: set DATABASE_URL or --data-dir\n" });
  });
});

describe("an operator's data in --data-dir", () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "pce-e2e-data-")), "db");
  let files: { products: string; daily: string };
  beforeAll(() => {
    files = writeFixtureCsv(mkdtempSync(join(tmpdir(), "pce-csv-")), PRODUCTS, DAILY);
  });

  test("migrate --dry-run on a data dir not there yet says what migrate would do, and creates nothing", () => {
    const dry = run(["migrate", "--dry-run", "--data-dir", dataDir]);
    expect([dry.code, dry.stderr, existsSync(dataDir)]).toEqual([0, "", false]);
    expect(JSON.parse(dry.stdout)).toMatchObject({
      msg: "migrate would create a new database, at this build's schema; nothing was changed",
      pending: 0,
      database: `embedded PostgreSQL (PGlite) in data dir ${dataDir}, not there yet`,
    });
  });

  test("migrate creates the database and is idempotent", () => {
    const first = run(["migrate", "--data-dir", dataDir]);
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
    // A new data dir starts from the migrated, refreshed seed: nothing to apply, nothing to fold in.
    expect(lines).toMatchObject([
      { msg: "migrations applied", applied: [] },
      { msg: "refreshed", mode: "none", notes: 0, answers: 0 },
    ]);
    expect(run(["migrate", "--data-dir", dataDir]).code).toBe(0);
  });

  test("load-csv loads both contract tables, from a file or stdin (-), with progress on stderr and a summary", () => {
    const p = run(["load-csv", "products", files.products, "--data-dir", dataDir]);
    expect(p.code).toBe(0);
    expect(JSON.parse(p.stdout.trim())).toMatchObject({ msg: "csv loaded", table: "products", rows: 8, inserted: 8, updated: 0 });
    // Not a terminal: plain lines, the last one at 100 % with the rows.
    expect(p.stderr).toMatch(new RegExp(`^load-csv: loading ${files.products}: 100% \\(0\\.0 MB of 0\\.0 MB\\) in \\d+\\.\\d s, 8 rows$`, "m"));
    const d = run(["load-csv", "product_daily_costs", "-"], { DATA_DIR: dataDir }, readFileSync(files.daily, "utf8"));
    expect(d.code).toBe(0);
    expect(d.stderr).toMatch(/^load-csv: loading stdin: 100% \(12 rows of 12 rows\) in \d+\.\d s$/m);
    expect(JSON.parse(d.stdout.trim())).toMatchObject({ msg: "csv loaded", table: "product_daily_costs", file: "stdin", rows: 12, inserted: 12, updated: 0 });
    // From a pipe (bash's process substitution): no size, so progress counts rows.
    const piped = Bun.spawnSync(["bash", "-c", `"$0" load-csv product_daily_costs <(cat "$1") --data-dir "$2"`, bin.path, files.daily, dataDir], { env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
    expect([piped.exitCode, JSON.parse(piped.stdout.toString().trim()).rows]).toEqual([0, 12]);
    expect(piped.stderr.toString()).toMatch(/: 100% \(12 rows of 12 rows\) in \d+\.\d s$/m);
    // Again: the same keys, now updates.
    const again = run(["load-csv", "product_daily_costs", files.daily], { DATA_DIR: dataDir });
    expect(JSON.parse(again.stdout.trim())).toMatchObject({ rows: 12, inserted: 0, updated: 12 });
  });

  test("load-csv refuses a bad file with one line naming the line and column, exit 2, changing nothing", () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-csv-bad-"));
    const bad = join(dir, "bad.csv");
    writeFileSync(bad, "product_id,colour\n1,red\n"); // written before the command reads it
    expect(run(["load-csv", "products", bad, "--data-dir", dataDir])).toEqual({
      code: 2,
      stdout: "",
      stderr: `product-cost-export: load-csv ${bad}: line 1: unknown column "colour" for products (columns: product_id, erp_product_id, erp_sku, product_name, is_sample); nothing was loaded\n`,
    });
    writeFileSync(bad, "product_id,erp_sku\n91,A\n92,B\nninety-three,C\n");
    expect(run(["load-csv", "products", bad, "--data-dir", dataDir])).toEqual({
      code: 2,
      stdout: "",
      stderr: `product-cost-export: load-csv ${bad}: line 4, column product_id: invalid input syntax for type bigint: "ninety-three"; nothing was loaded\n`,
    });
    writeFileSync(bad, Buffer.from([...Buffer.from("product_id,erp_sku\n94,caf"), 0xe9, 0x0a]));
    expect(run(["load-csv", "products", bad, "--data-dir", dataDir]).stderr).toBe(
      `product-cost-export: load-csv ${bad}: the file is not UTF-8 text (a byte sequence near byte 27 is not UTF-8); nothing was loaded\n`,
    );
    expect(run(["load-csv", "products", dir, "--data-dir", dataDir])).toEqual({ code: 2, stdout: "", stderr: `product-cost-export: cannot read ${dir}: EISDIR\n` });
  });

  test("serves exactly the loaded rows, and again after a warm restart", async () => {
    for (let i = 0; i < 2; i++) {
      const server = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY, DATA_DIR: dataDir }, [], bin.dir);
      try {
        expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({
          database: `embedded PostgreSQL (PGlite) in data dir ${dataDir}, existing database`,
        });
        expect(server.lines.find((l) => l.msg === "serving embedded demo data")).toBeUndefined();
        const normal = await get(server, "month_from=2024-01-01&month_to=2024-01-31");
        expect([normal.status, await normal.text()]).toEqual([200, JANUARY_NORMAL]);
        const all = await get(server, "month_from=2024-01-01&month_to=2024-01-31&segment=all");
        expect(await all.text()).toBe(JANUARY_ALL);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  });

  test("a data dir an older build left: serve, refresh and load-csv stop (exit 2) naming migrate; migrate applies the step once", async () => {
    const old = join(mkdtempSync(join(tmpdir(), "pce-e2e-old-")), "db");
    expect(run(["migrate", "--data-dir", old]).code).toBe(0);
    // As a build without 0005 left it (0005 makes again what is missing).
    const made = await openEmbedded({ dataDir: old, demoData: false, readOnly: false, connectTimeoutMs: 5000 });
    await made.sql`delete from schema_migrations where version = '0005'`;
    await made.close();
    const refusal = `product-cost-export: data dir ${old} was made by an older build (migrations 0005 not applied): run product-cost-export migrate --data-dir ${old} first\n`;
    for (const args of [["serve", "--port", "0"], ["refresh"], ["load-csv", "products", files.products]]) {
      expect([args, run([...args, "--data-dir", old], { PRODUCT_COST_API_KEYS: KEY })]).toEqual([args, { code: 2, stdout: "", stderr: refusal }]);
    }
    const dry = run(["migrate", "--dry-run", "--data-dir", old]);
    expect(dry.stdout.trim().split("\n").map((l) => JSON.parse(l).msg)).toEqual(["pending migration", "migrate would apply these steps; nothing was changed"]);
    const migrated = run(["migrate", "--data-dir", old]);
    expect(migrated.code).toBe(0);
    const lines = migrated.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.map((l) => [l.msg, l.version ?? l.applied])).toEqual([
      ["migration step done", "0005"],
      ["migrations applied", ["0005"]],
      ["refreshed", undefined],
    ]);
    expect(run(["load-csv", "products", files.products, "--data-dir", old]).code).toBe(0);
  }, 30_000); // four embedded starts: about 5 s on a busy 2-core machine

  test("a data dir started once with --demo-data keeps saying it serves made-up costs after a restart without it", async () => {
    const demoDir = join(mkdtempSync(join(tmpdir(), "pce-demo-dir-")), "data");
    for (const args of [["--demo-data"], []]) {
      const server = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY, DATA_DIR: demoDir }, args, bin.dir);
      try {
        expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({
          database: `embedded PostgreSQL (PGlite) in data dir ${demoDir}, ${args.length ? "new database with demo data" : "existing database with demo data"}`,
        });
        expect(await server.waitForLine((l) => l.msg === "serving embedded demo data")).toMatchObject({
          level: "warn",
          where: `in data dir ${demoDir}: kept across restarts, with or without --demo-data`,
        });
        const res = await get(server, "month_from=2000-01-01&month_to=2099-12-31");
        expect([res.status, res.headers.get("x-demo-data")]).toEqual([200, "true"]);
        const ready = await fetch(`${server.url}/readyz`);
        expect(await ready.text()).toBe('{"detail":"READY","data":"demo"}');
      } finally {
        expect(await server.stop()).toBe(0);
      }
    }
  });

  test("a second process on the same data dir stops with exit 2", async () => {
    const server = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY, DATA_DIR: dataDir }, [], bin.dir);
    try {
      const second = run([], { PRODUCT_COST_API_KEYS: KEY, DATA_DIR: dataDir, PORT: "0" });
      expect(second.code).toBe(2);
      expect(second.stderr).toBe(`product-cost-export: data dir ${dataDir} is in use by process ${server.proc.pid}\n`);
    } finally {
      await server.stop();
    }
  });
});
