// The ranges dashboards ask (last 7 or 30 days, month to date, year to date, rolling 12
// months, ...), end to end through the service, against the naive GROUP BY in psql on the
// same migrated database (so with the date index), in one run; then the same while changes
// wait to be folded (a whole month rewritten, the ETL's daily write), the refresh's time
// after each; the same shapes a month later, after November's first 24 days were written a
// day at a time with the timer's refresh after each (the month's rows as a month of the
// ETL's daily writes leaves them); and the rollup's size. Not part of `bun test`: bench.ts runs it on its dataset,
// or alone on a database bench.ts made:
//
//   bun tests/bench/ranges.ts --db pce_bench_50k [--runs 5] [--out file.md] [--binary <executable>]
//       [--phases folded,waiting,november] [--skip-waiting] [--stale-stats] [--edge-cache-mb N]
//
// --phases: which scenarios run (default all three; --skip-waiting leaves out "waiting").
// --edge-cache-mb: the service's EDGE_CACHE_MB (default: the service's own default); 0 reads
// every range by its one statement, as before the edge store.
// --stale-stats: autovacuum off on every table for the run (and no ANALYZE before it), so
// that only what the refresh does itself keeps the statistics (reset at the end).
//
// The database is changed and put back as it was (each scenario undoes its write and
// refreshes). BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server.
//
// Timing: the service is the compiled executable (dist/product-cost-export), one client,
// request sent to last body byte (curl's time_total, identity encoding). It keeps no answer
// between requests (ANSWER_CACHE_MB=0), so every read is a first read; the first of each range is reported
// apart, the ratio uses the median of `runs`. No read and no naive GROUP BY is timed while the
// service reads edges in the background (settled()): a repeat finds what the warmer kept. The naive GROUP BY (tests/db/naive_product_costs.sql)
// runs in psql as a prepared statement, PostgreSQL's defaults (parallel workers allowed),
// median of `runs`.

import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import naive from "../db/naive_product_costs.sql" with { type: "text" };

const ROOT = resolve(import.meta.dir, "../..");
const KEY = "bench-key-0123456789abcdef";

export interface RangeBenchOptions {
  /** The database, migrated, holding bench.ts's generated data (730 days ending 2026-10-31). */
  dbUrl: string;
  binary: string;
  runs: number;
  log: (msg: string) => void;
  /** The scenarios to run: the folded rollup, the reads while changes wait (a month rewritten, the daily write), November a day at a time. */
  phases: Set<Phase>;
  /** Autovacuum off on every table for the run, and no ANALYZE before it. */
  staleStats?: boolean;
  /** The service's EDGE_CACHE_MB; undefined: its default. */
  edgeCacheMb?: string;
}

export const PHASES = ["folded", "waiting", "november"] as const;
type Phase = (typeof PHASES)[number];

/** Every table of the database, partitions included, with autovacuum on or off. */
function setAutovacuum(url: string, on: boolean): void {
  psql(
    url,
    `do $$ declare t regclass; begin
       for t in select c.oid::regclass from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'public' and c.relkind = 'r' loop
         execute format('alter table %s ${on ? "reset (autovacuum_enabled)" : "set (autovacuum_enabled = false)"}', t);
       end loop; end $$;`,
  );
}

export interface Range {
  name: string;
  from: string;
  to: string;
  /** The issue's goal: service ÷ naive speed at least this. */
  goal: number;
}

// The data's last day is 2026-10-31; "today" for month and year to date is the 24th, as a
// dashboard opened late in the month asks.
export const RANGES: Range[] = [
  { name: "one day", from: "2026-10-15", to: "2026-10-15", goal: 1 },
  { name: "last 7 days", from: "2026-10-25", to: "2026-10-31", goal: 1 },
  { name: "month to date (1st to 24th)", from: "2026-10-01", to: "2026-10-24", goal: 3 },
  { name: "last 30 days", from: "2026-10-02", to: "2026-10-31", goal: 3 },
  { name: "mid-month to mid-month", from: "2026-09-15", to: "2026-10-14", goal: 3 },
  { name: "last 90 days", from: "2026-08-03", to: "2026-10-31", goal: 5 },
  { name: "year to date", from: "2026-01-01", to: "2026-10-24", goal: 15 },
  { name: "rolling 12 months", from: "2025-10-25", to: "2026-10-24", goal: 15 },
  { name: "two whole months", from: "2026-08-01", to: "2026-09-30", goal: 10 },
  { name: "a calendar month (rendered)", from: "2026-09-01", to: "2026-09-30", goal: 10 },
  { name: "two years", from: "2024-11-01", to: "2026-10-31", goal: 10 },
];
// The same shapes a month later, once November's first 24 days are written.
const NOVEMBER_RANGES: Range[] = [
  { name: "one day", from: "2026-11-15", to: "2026-11-15", goal: 1 },
  { name: "last 7 days", from: "2026-11-18", to: "2026-11-24", goal: 1 },
  { name: "month to date", from: "2026-11-01", to: "2026-11-24", goal: 3 },
  { name: "last 30 days", from: "2026-10-26", to: "2026-11-24", goal: 3 },
  { name: "mid-month to mid-month", from: "2026-10-15", to: "2026-11-14", goal: 3 },
  { name: "last 90 days", from: "2026-08-27", to: "2026-11-24", goal: 5 },
  { name: "year to date", from: "2026-01-01", to: "2026-11-24", goal: 15 },
  { name: "rolling 12 months", from: "2025-11-25", to: "2026-11-24", goal: 15 },
  { name: "two whole months", from: "2026-09-01", to: "2026-10-31", goal: 10 },
  { name: "two years", from: "2024-11-25", to: "2026-11-24", goal: 10 },
];
export const SEGMENT = "normal";

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
export const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1)) + " ms";
const ratio = (x: number) => (x >= 10 ? x.toFixed(0) : x.toFixed(1)) + "×";
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");

function psql(url: string, script: string): string {
  const r = Bun.spawnSync(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url], { stdin: Buffer.from(script), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** psql's \timing of one statement, in ms. */
function timed(url: string, statement: string): number {
  const out = psql(url, `\\timing on\n${statement};\n`);
  return Number(/Time: ([0-9.]+) ms/.exec(out)![1]);
}

/** The naive GROUP BY's times; `serial`: with max_parallel_workers_per_gather = 0, as the service's cursor always runs. */
export function naiveTimes(url: string, range: Range, runs: number, serial = false): number[] {
  const body = naive.replace(/^\s*--.*$/gm, "").trim();
  const script =
    (serial ? "set max_parallel_workers_per_gather = 0;\n" : "") +
    `prepare q(date, date, text) as ${body};\n\\o /dev/null\n\\timing on\n` +
    Array.from({ length: runs }, () => `execute q('${range.from}', '${range.to}', '${SEGMENT}');`).join("\n") +
    "\n";
  return [...psql(url, script).matchAll(/Time: ([0-9.]+) ms/g)].map((m) => Number(m[1]));
}

/** One request, sent to last byte, in ms. */
function serviceTime(base: string, range: Range): number {
  const url = `${base}/external/v1/product-costs?month_from=${range.from}&month_to=${range.to}&segment=${SEGMENT}`;
  const r = Bun.spawnSync(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_total}", "-H", `Authorization: Bearer ${KEY}`, url], { stdout: "pipe" });
  const [status, seconds] = r.stdout.toString().split(" ");
  if (status !== "200") throw new Error(`${range.name}: HTTP ${status}`);
  return Number(seconds) * 1000;
}

async function startService(opts: RangeBenchOptions): Promise<{ base: string; stop: () => Promise<void> }> {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  await server.stop(true);
  const proc = Bun.spawn([opts.binary, "serve"], {
    // The answer cache off: a range asked again would be answered from memory, not read.
    env: { PATH: "/usr/bin:/bin", DATABASE_URL: opts.dbUrl, PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn", ANSWER_CACHE_MB: "0", ...(opts.edgeCacheMb !== undefined ? { EDGE_CACHE_MB: opts.edgeCacheMb } : {}) },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 3000) throw new Error("the service did not get ready");
    await Bun.sleep(10);
  }
  return {
    base,
    stop: async () => {
      proc.kill("SIGTERM");
      await proc.exited;
    },
  };
}

/** `product-cost-export refresh` on the database: its own time (from its log line) and the notes it folded. */
function refresh(opts: RangeBenchOptions, rebuild = false): { ms: number; notes: number } {
  const r = Bun.spawnSync([opts.binary, "refresh", ...(rebuild ? ["--rebuild"] : [])], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: opts.dbUrl, LOG_LEVEL: "debug" }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`refresh failed: ${r.stderr.toString()}`);
  const line = r.stdout.toString().split("\n").find((l) => l.includes('"refreshed"'))!;
  const entry = JSON.parse(line) as { ms: number; notes: number };
  return { ms: entry.ms, notes: entry.notes };
}

interface Measured {
  range: Range;
  naive: number;
  /** The naive GROUP BY without parallel workers. */
  naiveSerial: number;
  first: number;
  service: number;
}

/**
 * Waits until the service reads nothing in the background (the edges a read by its statement
 * lacked: edge_cache_ranges_waiting 0), so that neither a first read nor the naive GROUP BY is
 * timed while it reads (at most 60 s).
 */
export function settled(base: string): void {
  for (let i = 0; i < 3000; i++) {
    const r = Bun.spawnSync(["curl", "-s", `${base}/metrics`], { stdout: "pipe" });
    const waiting = /^product_cost_export_edge_cache_ranges_waiting (\d+)$/m.exec(r.stdout.toString());
    if (!waiting || waiting[1] === "0") return;
    Bun.sleepSync(20);
  }
}

function measure(base: string, url: string, ranges: Range[], runs: number): Measured[] {
  return ranges.map((range) => {
    settled(base);
    const first = serviceTime(base, range);
    // Each repeat after the background reads are done, as a dashboard asks again seconds later
    // (not back to back): it finds what the edge warmer kept after the first read.
    const repeats = Array.from({ length: runs - 1 }, () => {
      settled(base);
      return serviceTime(base, range);
    });
    const service = median([first, ...repeats]);
    settled(base);
    return { range, naive: median(naiveTimes(url, range, runs)), naiveSerial: median(naiveTimes(url, range, runs, true)), first, service };
  });
}

/** Each range against the naive GROUP BY and its goal, as Markdown table lines. */
function goalTable(measured: Measured[]): string[] {
  return [
    "| range | naive GROUP BY | service: first read / median | service ÷ naive speed | goal | | naive, no parallel workers | service ÷ that |",
    "|---|---:|---:|---:|---:|---|---:|---:|",
    ...measured.map((m) => {
      const x = m.naive / m.service;
      return `| ${m.range.name} (${m.range.from}..${m.range.to}) | ${ms(m.naive)} | ${ms(m.first)} / ${ms(m.service)} | ${ratio(x)} | ≥ ${m.range.goal}× | ${verdict(x >= m.range.goal)} | ${ms(m.naiveSerial)} | ${ratio(m.naiveSerial / m.service)} |`;
    }),
  ];
}

function sizes(url: string): { daily: number; rollup: number; rows: number; parts: string } {
  const [daily, months, answers, deltas, rows] = psql(
    url,
    // The months are partitioned by month (0011): the parent holds nothing, its partitions the rows.
    `select pg_total_relation_size('product_daily_costs'),
            pg_total_relation_size('product_cost_months') + coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree('product_cost_months') where relid <> 'product_cost_months'::regclass), 0),
            pg_total_relation_size('product_cost_answers'), pg_total_relation_size('product_cost_deltas'),
            (select reltuples::bigint from pg_class where oid = 'product_daily_costs'::regclass);`,
  )
    .trim()
    .split("|")
    .map(Number);
  const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
  return {
    daily: daily!,
    rollup: months! + answers! + deltas!,
    rows: rows!,
    parts: `product_cost_months ${mb(months!)}, product_cost_answers ${mb(answers!)}, product_cost_deltas ${mb(deltas!)}`,
  };
}

/** The reads while changes wait to be folded: a whole month rewritten, and the ETL's daily write; each undone. */
function whileWaiting(opts: RangeBenchOptions, base: string) {
  const url = opts.dbUrl;
  // A whole month rewritten by the ETL (every daily row of September, one statement), read
  // before the refresh folds it; then the refresh, and the rewrite undone the same way.
  opts.log("ranges: September rewritten, waiting");
  const rewriteMs = timed(url, "update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where cost_date >= '2026-09-01' and cost_date < '2026-10-01'");
  const touching = RANGES.filter((r) => r.to >= "2026-09-01" && r.from <= "2026-09-30");
  const monthWaiting = measure(base, url, touching, opts.runs);
  const monthRefresh = refresh(opts);
  timed(url, "update product_daily_costs set purchase_cost_usd = purchase_cost_usd - 1 where cost_date >= '2026-09-01' and cost_date < '2026-10-01'");
  refresh(opts);

  // The ETL's usual write: one day (the last, 2026-10-31) for every product, one statement,
  // read at once; then the refresh. The day's rows are put back afterwards.
  opts.log("ranges: the daily write, waiting");
  psql(url, "create table bench_saved_day as select * from product_daily_costs where cost_date = '2026-10-31'; delete from product_daily_costs where cost_date = '2026-10-31';");
  refresh(opts);
  const lastDay = RANGES.filter((r) => r.to === "2026-10-31");
  const dayWriteMs = timed(
    url,
    "insert into product_daily_costs select product_id, '2026-10-31', 12.5, 1.25, 3.5, 0.75 from products",
  );
  const dayWaiting = measure(base, url, lastDay, opts.runs);
  const dayRefresh = refresh(opts);
  const dayFolded = measure(base, url, lastDay, opts.runs);
  psql(url, "delete from product_daily_costs where cost_date = '2026-10-31'; insert into product_daily_costs select * from bench_saved_day; drop table bench_saved_day;");
  refresh(opts);
  return { rewriteMs, monthWaiting, monthRefresh, dayWriteMs, dayWaiting, dayRefresh, dayFolded };
}

/**
 * A month as the ETL writes it: November's first 24 days, a day at a time (each October's
 * same day again, about 30 % of products), each followed by the timer's refresh (a fold, then
 * an idle run's upkeep). The first day adds the month's rows; each day after rewrites those of
 * the products it names. Where those rows end up on disk is what every range ending in the
 * month reads (issue 32). Then November deleted and the rollup rebuilt: the database as it was.
 */
function novemberDayByDay(opts: RangeBenchOptions, base: string) {
  const url = opts.dbUrl;
  opts.log("ranges: November written a day at a time");
  const dayRefreshes: number[] = [];
  for (let day = 1; day <= 24; day++) {
    const d = String(day).padStart(2, "0");
    psql(url, `insert into product_daily_costs select product_id, cost_date + 31, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd from product_daily_costs where cost_date = '2026-10-${d}';`);
    dayRefreshes.push(refresh(opts).ms);
    refresh(opts);
  }
  const novemberPages = psql(url, "select count(*) || ' ' || count(distinct (ctid::text::point)[0]) from product_cost_months where month = '2026-11-01';").trim().split(" ").map(Number);
  const reads = measure(base, url, NOVEMBER_RANGES, opts.runs);
  opts.log("ranges: November deleted, rebuilding");
  psql(url, "delete from product_daily_costs where cost_date >= '2026-11-01';");
  refresh(opts, true);
  refresh(opts);
  return { dayRefreshes, novemberPages, reads };
}

export async function rangeBench(opts: RangeBenchOptions): Promise<string> {
  const lines: string[] = [];
  const p = (s = "") => lines.push(s);
  const url = opts.dbUrl;
  if (opts.staleStats) setAutovacuum(url, false);
  refresh(opts); // whatever waits, folded: the scenarios start from a refreshed rollup
  if (!opts.staleStats) psql(url, "vacuum analyze product_cost_months, product_cost_answers, product_cost_deltas;");
  const service = await startService(opts);
  try {
    opts.log("ranges: refreshed");
    const folded = opts.phases.has("folded") ? measure(service.base, url, RANGES, opts.runs) : undefined;

    const waiting = opts.phases.has("waiting") ? whileWaiting(opts, service.base) : undefined;

    const size = sizes(url); // before the rebuild below leaves the months' old rows for vacuum to reuse
    const november = opts.phases.has("november") ? novemberDayByDay(opts, service.base) : undefined;
    const dailyRows = size.rows;

    p(`Autovacuum ${opts.staleStats ? "off on every table for this run, and no ANALYZE before it (the statistics are what \`migrate\` and the refresh made)" : "as the server has it; the rollup's tables analyzed before the run"}.`);
    p();
    if (folded) {
      p("### Ranges dashboards ask (rollup v3)");
      p();
      p(`One client, segment=${SEGMENT}, whole body; naive GROUP BY in psql on the same migrated database (date index, PostgreSQL's defaults, parallel workers allowed), median of ${opts.runs}; the service's first read of each range and the median of ${opts.runs} reads (it keeps no answer between requests: each is a first read). Beside it, the naive GROUP BY with \`max_parallel_workers_per_gather = 0\`: the service's statement runs through a cursor, which PostgreSQL never runs in parallel, so that is both sides without parallel workers.`);
      p();
      goalTable(folded).forEach((line) => p(line));
      p();
    }
    if (november) {
      const { dayRefreshes, novemberPages, reads } = november;
      p(`### A month as the ETL writes it: November's first 24 days, a day at a time`);
      p();
      p(`Each day October's same day again (about 30 % of products), then \`refresh\` (${ms(median(dayRefreshes))} median, ${ms(Math.max(...dayRefreshes))} at most, the month's first day ${ms(dayRefreshes[0]!)}) and an idle \`refresh\` (the upkeep), as the timer runs them. November's ${novemberPages[0]!.toLocaleString("en")} month rows then lie on ${novemberPages[1]!.toLocaleString("en")} heap pages. The same shapes of range, a month later ("today" the 24th):`);
      p();
      goalTable(reads).forEach((line) => p(line));
      p();
    }

    if (waiting) {
      const { rewriteMs, monthWaiting, monthRefresh, dayWriteMs, dayWaiting, dayRefresh, dayFolded } = waiting;
      p(`### While a whole month's rewrite waits to be folded`);
      p();
      p(`Every daily row of September 2026 rewritten by one UPDATE (${ms(rewriteMs)} for the ETL), then each range that touches September read before any refresh; naive at the same state. Goal: ≥ 2× the naive speed.`);
      p();
      p("| range | naive GROUP BY | service: first / median | service ÷ naive speed | |");
      p("|---|---:|---:|---:|---|");
      for (const m of monthWaiting) {
        const x = m.naive / m.service;
        p(`| ${m.range.name} | ${ms(m.naive)} | ${ms(m.first)} / ${ms(m.service)} | ${ratio(x)} | ${verdict(x >= 2)} |`);
      }
      p();
      p(`Then \`refresh\`: ${ms(monthRefresh.ms)} (${monthRefresh.notes.toLocaleString("en")} notes; goal ≤ 5 s: ${verdict(monthRefresh.ms <= 5000)}).`);
      p();
      p("### The ETL's daily write, read at once");
      p();
      p(`One new day (2026-10-31) for each of the ${(Number(psql(url, "select count(*) from products;").trim())).toLocaleString("en")} products, one INSERT (${ms(dayWriteMs)}), then the ranges that hold it, read before the refresh, against the same reads once refreshed. Goal: ≤ 2× the folded read.`);
      p();
      p("| range | waiting: first / median | folded: median | waiting ÷ folded | |");
      p("|---|---:|---:|---:|---|");
      for (const [i, m] of dayWaiting.entries()) {
        const f = dayFolded[i]!;
        const x = m.service / f.service;
        p(`| ${m.range.name} | ${ms(m.first)} / ${ms(m.service)} | ${ms(f.service)} | ${x.toFixed(2)} | ${verdict(x <= 2)} |`);
      }
      p();
      p(`Then \`refresh\`: ${ms(dayRefresh.ms)} (${dayRefresh.notes.toLocaleString("en")} notes; goal ≤ 1 s: ${verdict(dayRefresh.ms <= 1000)}).`);
      p();
    }
    p("### Size");
    p();
    const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    p(
      `product_daily_costs with its indexes: ${mb(size.daily)} for ${dailyRows.toLocaleString("en")} rows; the rollup: ${mb(size.rollup)} (${size.parts}), ` +
        `${(size.rollup / size.daily).toFixed(2)}× the daily table (goal ≤ 1.5×: ${verdict(size.rollup <= 1.5 * size.daily)}), ` +
        `${(size.rollup / 2 ** 20 / (dailyRows / 1e6)).toFixed(0)} MiB per million daily rows.`,
    );
    p();
    return lines.join("\n") + "\n";
  } finally {
    await service.stop();
    if (opts.staleStats) setAutovacuum(url, true);
  }
}

/** --phases a,b (each one of PHASES), less "waiting" with --skip-waiting. */
function phasesOption(list: string, skipWaiting: boolean): Set<Phase> {
  const phases = new Set<Phase>();
  for (const name of list.split(",").filter(Boolean)) {
    if (!(PHASES as readonly string[]).includes(name)) throw new Error(`--phases: ${name} is not one of ${PHASES.join(", ")}`);
    phases.add(name as Phase);
  }
  if (skipWaiting) phases.delete("waiting");
  return phases;
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const option = (name: string, fallback: string) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
  };
  const server = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
  const db = option("db", "pce_bench_50k");
  const today = new Date().toISOString().slice(0, 10);
  const commit = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim();
  const report =
    `## Ranges benchmark, ${today}, \`${db}\`\n\n- Command: \`bun tests/bench/ranges.ts ${argv.join(" ")}\` (commit ${commit})\n` +
    `- Load average before: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}\n\n` +
    (await rangeBench({
      dbUrl: `${server}/${db}`,
      binary: resolve(option("binary", join(ROOT, "dist/product-cost-export"))),
      runs: Number(option("runs", "5")),
      log: (m) => console.error(m),
      phases: phasesOption(option("phases", PHASES.join(",")), argv.includes("--skip-waiting")),
      staleStats: argv.includes("--stale-stats"),
      ...(argv.includes("--edge-cache-mb") ? { edgeCacheMb: option("edge-cache-mb", "") } : {}),
    }));
  const out = option("out", "");
  if (out) writeFileSync(resolve(out), report);
  process.stdout.write(report);
}
