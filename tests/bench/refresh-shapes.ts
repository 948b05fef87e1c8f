// The refresh after each write an ETL makes, timed (issue 29): on a copy of the generated
// dataset (tests/bench/dataset.ts: 730 days ending 2026-10-31), the writes of a month in
// order, each followed by `product-cost-export refresh` (the compiled executable, as the
// timer runs it), with autovacuum off on the rollup's tables (nothing but the refresh keeps
// their statistics: the worst case) and again with autovacuum on (the server's own settings,
// autovacuum switched on for the run). Not part of `bun test`.
//
//   bun tests/bench/refresh-shapes.ts --scale 50k [--reuse] [--autovacuum off|on|both] [--no-build] [--out file.md] [--only 1,2,4]
//
// Each write's refresh folds only (as the timer's does); the timer's next run, which finds
// nothing to fold, does the upkeep left to it (renders, the months' vacuum): run and timed
// right after as "next idle run". --only runs some of the shapes (1-based, in the order below).
//
// Between each write and its refresh, and after the refresh, two ranges touching the write
// are read with the service's statement and compared with the GROUP BY in one REPEATABLE
// READ snapshot: reads are exact whether or not the refresh has run. The read after the
// refresh is timed too (a plan that the refresh's statistics make bad shows there).
// BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server.

import { writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join, resolve } from "node:path";
import type postgres from "postgres";
import { createPool } from "../../src/database/client.ts";
import { productCostsStatement } from "../../src/reads/product-costs.ts";
import naive from "../db/naive_product_costs.sql" with { type: "text" };
import { prepareDataset, psql } from "./dataset.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BINARY = join(ROOT, "dist/product-cost-export");

const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(`--${name}`);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const scale = option("scale", "50k");
const modes = ((m) => (m === "both" ? ["off", "on"] : [m]))(option("autovacuum", "both")) as ("off" | "on")[];
const today = new Date().toISOString().slice(0, 10);
const out = resolve(option("out", join(ROOT, `tests/bench/results/${today}-refresh-${scale}.md`)));
const SERVER = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const log = (msg: string) => console.error(`refresh-shapes: ${msg}`);

if (!flag("no-build")) {
  log("building dist/product-cost-export (bash build.sh)");
  const b = Bun.spawnSync(["bash", "build.sh"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" });
  if (b.exitCode !== 0) throw new Error("build failed");
}
const dataset = prepareDataset({ scale, server: SERVER, binary: BINARY, reuse: flag("reuse"), log });
const P = dataset.products;

// Amounts of new rows, from PostgreSQL's hash as the generator makes them (any value will do;
// these are reproducible).
const AMOUNT = (salt: number) =>
  `case when $h % 100 < 3 then null when $h % 100 < 5 then 0 else (($h >> 3) % 500000 + 1)::numeric / 100 end`.replaceAll("$h", `(hashint8extended(p * 1024 + d, ${salt}) & 2147483647)`);
const ROW_VALUES = `${AMOUNT(21)}, ${AMOUNT(22)}, ${AMOUNT(23)}, ${AMOUNT(24)}`;
const dayOf = (date: string) => `(date '${date}' - date '2024-11-01')`;

interface Shape {
  name: string;
  /** SQL the ETL runs (one transaction). */
  write?: string;
  /** Extra arguments to `refresh`. */
  refreshArgs?: string[];
  /** Two ranges that hold the write, read before and after the refresh. */
  ranges: [string, string][];
  /** The issue's target at 50,000 products, seconds (200,000: within 4× of the 50,000 figure). */
  target?: number;
}

const deleted = `product_id % ${Math.round(P / 1000)} = 7 and product_id <= ${P}`; // 1,000 products
const SHAPES: Shape[] = [
  {
    name: "the first day of a new month, every product",
    write: `insert into product_daily_costs select p, date '2026-11-01', ${ROW_VALUES} from generate_series(1, ${P}::bigint) p, (select ${dayOf("2026-11-01")}::bigint as d) d`,
    ranges: [["2026-10-15", "2026-11-01"], ["2026-11-01", "2026-11-01"]],
    target: 1,
  },
  {
    name: "the next day, every product",
    write: `insert into product_daily_costs select p, date '2026-11-02', ${ROW_VALUES} from generate_series(1, ${P}::bigint) p, (select ${dayOf("2026-11-02")}::bigint as d) d`,
    ranges: [["2026-10-25", "2026-11-02"], ["2026-11-01", "2026-11-02"]],
    target: 1,
  },
  {
    name: "a day for a tenth of the products",
    write: `insert into product_daily_costs select p, date '2026-11-03', ${ROW_VALUES} from generate_series(10, ${P}::bigint, 10) p, (select ${dayOf("2026-11-03")}::bigint as d) d`,
    ranges: [["2026-10-25", "2026-11-03"], ["2026-11-03", "2026-11-03"]],
  },
  {
    name: "a late correction of every row of an old month (September)",
    write: `update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 0.01 where cost_date >= date '2026-09-01' and cost_date < date '2026-10-01'`,
    ranges: [["2026-09-15", "2026-11-03"], ["2026-01-01", "2026-11-03"]],
    target: 5,
  },
  {
    name: "5,000 new products with 90 days",
    write:
      `insert into products select p, 900000000 + p, 'NEW-' || p, 'New product ' || p, false from generate_series(${P + 1}, ${P + 5000}::bigint) p;\n` +
      `insert into product_daily_costs select p, date '2024-11-01' + d::int, ${ROW_VALUES} from generate_series(${P + 1}, ${P + 5000}::bigint) p, ` +
      `generate_series(${dayOf("2026-08-05")}::bigint, ${dayOf("2026-11-02")}::bigint) d where (hashint8extended(p * 1024 + d, 10) & 2147483647) % 100 < 30`,
    ranges: [["2026-08-15", "2026-11-02"], ["2024-11-01", "2026-11-03"]],
    target: 5,
  },
  {
    name: "1,000 products deleted with their rows",
    write: `with gone as (delete from product_daily_costs where ${deleted} returning 1) delete from products where ${deleted}`,
    ranges: [["2025-06-15", "2026-11-03"], ["2024-11-01", "2026-11-03"]],
    target: 2,
  },
  {
    name: "every product renamed",
    write: `update products set product_name = coalesce(product_name, '') || ' (renamed)'`,
    ranges: [["2026-09-01", "2026-09-30"], ["2026-10-10", "2026-11-03"]],
    target: 2,
  },
  {
    name: "TRUNCATE and reload of the daily table",
    write:
      "create temporary table reload as select * from product_daily_costs;\n" +
      "truncate product_daily_costs;\ninsert into product_daily_costs select * from reload order by cost_date, product_id;",
    ranges: [["2026-09-15", "2026-11-03"], ["2026-10-01", "2026-10-31"]],
  },
  { name: "refresh --rebuild", refreshArgs: ["--rebuild"], ranges: [["2025-03-15", "2026-11-03"], ["2026-11-01", "2026-11-03"]] },
];

const only = option("only", "")
  .split(",")
  .filter(Boolean)
  .map(Number);
const shapes = only.length > 0 ? SHAPES.filter((_, i) => only.includes(i + 1)) : SHAPES;

interface Result {
  shape: Shape;
  writeS: number;
  exactBefore: boolean;
  refreshWallS: number;
  report: { mode: string; notes: number; steps: number; answers: number; ms: number; step_ms: Record<string, number> };
  exactAfter: boolean;
  readAfterMs: number;
  idle: { wallS: number; report: Result["report"] };
}

/** Both statements in one REPEATABLE READ snapshot: is the service's answer the GROUP BY's? And how long the service's took. */
async function exact(sql: postgres.Sql, ranges: [string, string][]): Promise<{ ok: boolean; ms: number }> {
  let ok = true;
  let ms = 0;
  for (const [from, to] of ranges) {
    await sql.begin("isolation level repeatable read", async (tx) => {
      await tx`select 1`;
      const statement = productCostsStatement({ monthFrom: from, monthTo: to, segment: "all" });
      const t = performance.now();
      const service = await tx.unsafe(statement.text, statement.params).raw();
      ms = Math.max(ms, performance.now() - t);
      const plain = await tx.unsafe(naive, [from, to, "all"]).raw();
      const text = (rows: unknown[]) => JSON.stringify(rows.map((r) => (r as (Uint8Array | null)[]).map((c) => (c === null ? null : Buffer.from(c).toString()))));
      if (text(service) !== text(plain)) {
        ok = false;
        log(`NOT EXACT: ${from}..${to}: ${service.length} rows against ${plain.length}`);
      }
    });
  }
  return { ok, ms };
}

function refresh(url: string, args: string[]): { wallS: number; report: Result["report"] } {
  const t = performance.now();
  const r = Bun.spawnSync([BINARY, "refresh", ...args], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: url, LOG_FORMAT: "json", LOG_LEVEL: "debug" }, stdout: "pipe", stderr: "pipe" }); // debug: an idle run says "refreshed" at debug only
  const wallS = (performance.now() - t) / 1000;
  if (r.exitCode !== 0) throw new Error(`refresh failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
  const line = r.stdout
    .toString()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.msg === "refreshed");
  if (!line) throw new Error(`no "refreshed" line: ${r.stdout.toString()}`);
  return { wallS, report: line as unknown as Result["report"] };
}

async function runMode(mode: "off" | "on"): Promise<Result[]> {
  const name = `pce_refresh_${scale}_${mode}`;
  const url = `${SERVER}/${name}`;
  log(`${name}: a copy of ${dataset.name}`);
  psql(`${SERVER}/postgres`, `drop database if exists ${name} with (force);\ncreate database ${name} template ${dataset.name} strategy file_copy;\n`);
  const rollup = "product_cost_months, product_cost_deltas, product_cost_answers, product_cost_refreshes, product_cost_folded_changes";
  // The months are partitioned (0011): the setting goes on each partition, and the next one made copies it.
  const partitions = psql(url, "select string_agg(inhrelid::regclass::text, ', ') from pg_inherits where inhparent = 'product_cost_months'::regclass;").trim();
  for (const table of [...rollup.split(", "), ...(partitions ? partitions.split(", ") : [])]) {
    if (table === "product_cost_months" && partitions) continue;
    psql(url, `alter table ${table} set (autovacuum_enabled = ${mode === "on"});`);
  }
  // Reads as the service reads: its serving session's settings (src/database/client.ts).
  const sql = createPool({ url, max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 0, readOnly: true, applicationName: "pce-refresh-shapes" });
  const results: Result[] = [];
  try {
    for (const shape of shapes) {
      let writeS = 0;
      if (shape.write) {
        const t = performance.now();
        psql(url, `begin;\n${shape.write};\ncommit;\n`);
        writeS = (performance.now() - t) / 1000;
      }
      const before = await exact(sql, shape.ranges);
      const { wallS, report } = refresh(url, shape.refreshArgs ?? []);
      const after = await exact(sql, shape.ranges);
      const idle = refresh(url, []);
      const result = { shape, writeS, exactBefore: before.ok, refreshWallS: wallS, report, exactAfter: after.ok, readAfterMs: after.ms, idle };
      results.push(result);
      log(`${mode}: ${shape.name}: write ${writeS.toFixed(1)} s, refresh ${wallS.toFixed(2)} s (${JSON.stringify(report.step_ms)}), exact ${before.ok && after.ok}, read ${after.ms.toFixed(0)} ms, next idle run ${idle.wallS.toFixed(2)} s (${JSON.stringify(idle.report.step_ms)})`);
    }
  } finally {
    await sql.end();
  }
  psql(`${SERVER}/postgres`, `drop database if exists ${name} with (force);\n`);
  return results;
}

// Autovacuum on for the "on" run (this machine's server may have it off), as it was after.
const autovacuumWas = psql(`${SERVER}/postgres`, "show autovacuum;").trim();
const all: Record<string, Result[]> = {};
try {
  for (const mode of modes) {
    if (mode === "on" && autovacuumWas !== "on") psql(`${SERVER}/postgres`, "alter system set autovacuum = on;\nselect pg_reload_conf();\n");
    try {
      all[mode] = await runMode(mode);
    } finally {
      if (mode === "on" && autovacuumWas !== "on") psql(`${SERVER}/postgres`, "alter system reset autovacuum;\nselect pg_reload_conf();\n");
    }
  }
} finally {
  // nothing else to put back
}

const lines: string[] = [];
const p = (s = "") => lines.push(s);
p(`## Refresh after each write, ${today}, ${P.toLocaleString("en")} products`);
p();
p(`- Command: \`bun tests/bench/refresh-shapes.ts ${argv.join(" ")}\``);
p(`- Machine: ${cpus().length} × ${cpus()[0]?.model ?? "?"}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB; ${psql(`${SERVER}/postgres`, "select version();").trim().split(" on ")[0]}, shared_buffers ${psql(`${SERVER}/postgres`, "show shared_buffers;").trim()}; load average at the end ${(await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ")}`);
p(`- Dataset \`${dataset.name}\`: ${dataset.meta.daily_rows.toLocaleString("en")} daily rows (730 days ending 2026-10-31), copied for each run; the writes below in this order, each in one transaction, each followed by \`product-cost-export refresh\` (the executable, timed as a whole: process start, connection, the refresh; its own figure and its parts from its \`refreshed\` log line).`);
p(`- Exact: two ranges holding the write, read with the service's statement and the GROUP BY in one snapshot, after the write and again after the refresh. Read after: the service's statement after the refresh (the slower of the two ranges).`);
p();
for (const [mode, results] of Object.entries(all)) {
  p(`### Autovacuum ${mode === "off" ? "off on the rollup's tables (only the refresh keeps their statistics)" : "on"}`);
  p();
  p("| write | write took | refresh (command) | refresh's own | parts (ms) | notes folded | steps | exact before / after | read after | next idle run (parts, ms) | target |");
  p("|---|---:|---:|---:|---|---:|---:|---|---:|---|---|");
  for (const r of results) {
    const own = r.report.ms / 1000;
    const target = r.shape.target === undefined ? "" : scale === "50k" ? `≤ ${r.shape.target} s: ${own <= r.shape.target ? "met" : "missed"}` : `≤ ${r.shape.target} s at 50k`;
    const partsOf = (report: Result["report"]) => Object.entries(report.step_ms ?? {}).map(([k, v]) => `${k} ${v}`).join(", ");
    const parts = partsOf(r.report);
    const idleParts = partsOf(r.idle.report) || "nothing to do";
    p(`| ${r.shape.name} | ${r.writeS.toFixed(1)} s | ${r.refreshWallS.toFixed(2)} s | ${own.toFixed(2)} s | ${parts} | ${r.report.notes.toLocaleString("en")} | ${r.report.steps} | ${r.exactBefore ? "yes" : "**NO**"} / ${r.exactAfter ? "yes" : "**NO**"} | ${r.readAfterMs.toFixed(0)} ms | ${r.idle.wallS.toFixed(2)} s (${idleParts}) | ${target} |`);
  }
  p();
}
const report = lines.join("\n") + "\n";
writeFileSync(out, report);
process.stdout.write(report);
log(`wrote ${out}`);
