// load-csv streams: the executable's peak memory does not grow with the file. A 3 MB and a
// 15 MB file of daily costs are loaded into a database of their own; the larger one may not
// take more than 20 MB more at its peak (reading the whole file, as before, took ~4 bytes of
// RSS per byte of file: measured +76 MB from a 5 to a 24 MB file). Rows and sums are checked.
// Peaks are the executable's own (support/peak-rss.ts), not the test process's it would inherit.
// Nor with what is in the file (issue 52): a NUL byte, endless or huge fields and rows are
// refused where they are in under 100 MB (before: /dev/zero ran out of memory at 2.7 GB, a
// 50 MB field took 410 MB, 16 MB of commas 1.3 GB), and rows of the widest values a product
// can hold load in under 200 MB (before: 670 MB).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { cleanEnv, isolatedBinary } from "../support/binary.ts";
import { SERVER_URL } from "../support/database.ts";
import { runWithPeakRss } from "../support/peak-rss.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const NAME = `pce_load_stream_${process.pid}`;
const PRODUCTS = 500;

describeWithPostgres("load-csv streams a file of any size", () => {
  const work = mkdtempSync(join(tmpdir(), "pce-load-stream-"));
  const url = (() => {
    const u = new URL(SERVER_URL);
    u.pathname = "/" + NAME;
    return u.toString();
  })();
  let bin: { dir: string; path: string };
  let sql: postgres.Sql;

  /** Daily costs for `days` days of every product, in cents so that the sum is exact; and that sum. */
  function dailyFile(name: string, firstDay: string, days: number): { path: string; rows: number; cents: bigint } {
    const parts = ["product_id,cost_date,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\n"];
    let cents = 0n;
    const start = Date.parse(firstDay);
    for (let d = 0; d < days; d++) {
      const date = new Date(start + d * 86_400_000).toISOString().slice(0, 10);
      for (let p = 1; p <= PRODUCTS; p++) {
        const c = (p * 7919 + d * 104_729) % 100_000;
        cents += BigInt(c);
        parts.push(`${p},${date},${Math.floor(c / 100)}.${String(c % 100).padStart(2, "0")},0.25,,1\n`);
      }
    }
    const path = join(work, name);
    writeFileSync(path, parts.join(""));
    return { path, rows: days * PRODUCTS, cents };
  }

  /** The executable's exit, output and own peak RSS (MiB) for `load-csv <table> <file>`. */
  const load = (file: string, table = "product_daily_costs") => runWithPeakRss([bin.path, "load-csv", table, file], cleanEnv({ DATABASE_URL: url }));

  beforeAll(async () => {
    bin = isolatedBinary();
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.unsafe(`create database ${NAME}`);
    await server.end();
    const migrate = Bun.spawnSync([bin.path, "migrate"], { env: cleanEnv({ DATABASE_URL: url }) });
    expect(migrate.exitCode).toBe(0);
    sql = postgres(url, { max: 1, onnotice: () => {} });
    await sql`insert into products (product_id) select generate_series(1, ${PRODUCTS})`;
  });
  afterAll(async () => {
    await sql?.end();
    const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    await server.unsafe(`drop database if exists ${NAME} with (force)`);
    await server.end();
    rmSync(work, { recursive: true, force: true });
  });

  const productCount = async () => (await sql<{ n: number }[]>`select count(*)::int as n from products`)[0]!.n;

  test.each([
    ["`load-csv products - < /dev/zero`", `"$0" load-csv products - < /dev/zero`, "line 1, column 1: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    ["a NUL byte in a quoted name", `printf 'product_id,product_name\\n7,"Lamp\\0"\\n' | "$0" load-csv products -`, "line 2, column product_name: a NUL byte (0x00), which PostgreSQL text cannot hold"],
    ["256 MiB with no line break", `head -c 256M /dev/zero | tr '\\0' a | "$0" load-csv products -`, "line 1, column 1: a field longer than 1,048,576 characters"],
    ["a 64 MiB row of 100,000-character fields", `yes "$(head -c 100000 /dev/zero | tr '\\0' a)" | tr '\\n' , | head -c 64M | "$0" load-csv products -`, "line 1: a row longer than 4,194,304 characters"],
    ["16 MiB of commas", `head -c 16M /dev/zero | tr '\\0' , | "$0" load-csv products -`, "line 1: more than 1,000 fields"],
  ])("%s: exit 2 naming where, nothing loaded, under 100 MB", async (_, command, message) => {
    const before = await productCount();
    const r = runWithPeakRss(["bash", "-c", command, bin.path], cleanEnv({ DATABASE_URL: url }));
    expect({ code: r.code, stderr: r.stderr, under100Mb: r.peakMb < 100 }).toEqual({
      code: 2,
      stderr: `product-cost-export: load-csv stdin: ${message}; nothing was loaded\n`,
      under100Mb: true,
    });
    expect(await productCount()).toBe(before);
  }, 130_000);

  test("a 50 MB quoted field: exit 2 naming its line and column, under 100 MB", async () => {
    const path = join(work, "field.csv");
    writeFileSync(path, `product_id,product_name\n7,"${"x".repeat(50 * 2 ** 20)}"\n`);
    const before = await productCount();
    const r = load(path, "products");
    expect({ code: r.code, stderr: r.stderr, under100Mb: r.peakMb < 100 }).toEqual({
      code: 2,
      stderr: `product-cost-export: load-csv ${path}: line 2, column product_name: a field longer than 1,048,576 characters; nothing was loaded\n`,
      under100Mb: true,
    });
    expect(await productCount()).toBe(before);
  }, 60_000);

  test("40 rows of the widest values a product can hold (80 MB) load whole, under 200 MB", async () => {
    const [sku, name] = ["s".repeat(2 ** 20), "n".repeat(2 ** 20)];
    const path = join(work, "wide.csv");
    writeFileSync(path, "product_id,erp_sku,product_name\n" + Array.from({ length: 40 }, (_, i) => `${1001 + i},${sku},"${name}"\n`).join(""));
    const r = load(path, "products");
    expect({ code: r.code, summary: JSON.parse(r.stdout.trim()), under200Mb: r.peakMb < 200 }).toEqual({
      code: 0,
      summary: expect.objectContaining({ msg: "csv loaded", rows: 40, inserted: 40, updated: 0 }),
      under200Mb: true,
    });
    expect(await sql`select count(*)::int as n, sum(length(erp_sku) + length(product_name))::int as chars from products where product_id > 1000`).toEqual([{ n: 40, chars: 40 * 2 ** 21 }] as never);
    await sql`delete from products where product_id > 1000`;
  }, 60_000);

  test("a file five times larger takes no more memory, and every row and cent arrives", async () => {
    const small = dailyFile("small.csv", "2023-01-01", 80); // ~3 MB
    const large = dailyFile("large.csv", "2024-01-01", 400); // ~15 MB
    const first = load(small.path);
    const second = load(large.path);
    expect([first.code, first.stderr.includes("100%"), second.code]).toEqual([0, true, 0]);
    expect(JSON.parse(second.stdout.trim())).toMatchObject({ msg: "csv loaded", rows: large.rows, inserted: large.rows, updated: 0 });
    const [stored] = await sql<{ rows: number; cents: string }[]>`
      select count(*)::int as rows, (sum(purchase_cost_usd) * 100)::bigint::text as cents from product_daily_costs`;
    expect(stored).toEqual({ rows: small.rows + large.rows, cents: String(small.cents + large.cents) });
    const growthMb = second.peakMb - first.peakMb;
    expect({ smallMb: Math.round(first.peakMb), growthUnder20Mb: growthMb < 20 }).toEqual({ smallMb: Math.round(first.peakMb), growthUnder20Mb: true });
  }, 120_000);
});
