// Issue 44's read from the daily rows (sql/queries/product_costs_daily.sql), the source the
// service takes where it may not read the rollup, against the naive GROUP BY it is meant to
// match (target: within 10 % of it without parallel workers) and against the rollup, in one run
// on one generated, migrated database (dataset.ts). For every range of ranges.ts's RANGES:
//   - the naive GROUP BY (tests/db/naive_product_costs.sql) in psql, ranges.ts's naiveTimes:
//     PostgreSQL's defaults (parallel workers allowed), serial (max_parallel_workers_per_gather
//     = 0: the service's cursor never runs in parallel), and as the service runs it, like with
//     like: its session settings (SERVING_SETTINGS of src/database/client.ts: jit off, work_mem, ...)
//     and max_parallel_workers = 0. A portal read in batches never gets workers: where those
//     settings let the planner count on them, the plan made for them runs in the leader alone;
//   - the executable reading the rollup (DATABASE_URL of the owner, as ranges.ts starts it);
//   - the same executable reading the daily rows: DATABASE_URL of a role made here that may
//     SELECT products and product_daily_costs alone (dropped at the end), so that it picks the
//     daily source; checked by its /readyz ("source":"daily rows"), its answers (no ETag) and
//     its "request" log lines ("source":"daily").
// Both services' answers to each range are checked to be the same bytes (sha256); the run fails
// if not. Then each service's peak RSS (VmHWM). Not part of `bun test`:
//
//   bun tests/bench/daily-source.ts [--scale 50k] [--db NAME] [--runs 5] [--out file.md]
//
// --scale: the dataset pce_bench_<scale>, made by dataset.ts unless made by this generator
// already (reused). --db: a database bench.ts made instead (used as it is). --out defaults to
// tests/bench/results/<date>-daily-source-<scale>.md. BENCH_POSTGRES_URL (default
// postgres://postgres@127.0.0.1:5432) is the server; the executable is dist/product-cost-export.
//
// Timing: one client, curl, identity encoding, body discarded; time to first byte
// (time_starttransfer) and to last byte (time_total). Both services keep no answer between
// requests (ANSWER_CACHE_MB=0). Per range: each service's first read, reported apart, then
// `runs` more, alternated between the two services, whose median is reported. The naive GROUP
// BY: median of `runs` executions of one prepared statement, output sent to /dev/null.

import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SERVING_SETTINGS } from "../../src/database/client.ts";
import { prepareDataset, psql } from "./dataset.ts";
import { median, ms, naiveTimes, type Range, RANGES, SEGMENT } from "./ranges.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BINARY = join(ROOT, "dist/product-cost-export");
const SERVER = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const KEY = "bench-key-0123456789abcdef";
const ROLE = "pce_bench_daily";
const TMP = `/tmp/daily-source-${process.pid}`;

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const scale = option("scale", "50k");
const runs = Number(option("runs", "5"));
const today = new Date().toISOString().slice(0, 10);
const out = resolve(option("out", join(ROOT, `tests/bench/results/${today}-daily-source-${scale}.md`)));
const log = (msg: string) => console.error(`daily-source: ${msg}`);
mkdirSync(TMP, { recursive: true });

const db = argv.includes("--db") ? option("db", "") : prepareDataset({ scale, server: SERVER, binary: BINARY, reuse: true, log }).name;
const ownerUrl = `${SERVER}/${db}`;
const roleUrl = (() => {
  const u = new URL(ownerUrl);
  u.username = ROLE;
  u.password = "";
  return u.toString();
})();
// The naive GROUP BY as the service's cursor runs it: its session settings (from the source: the
// executable should be built from the same), and no parallel worker ever launched, whatever the
// plan counted on (the URL's options, as libpq reads them).
const serviceWay = { ...SERVING_SETTINGS, max_parallel_workers: 0 };
const serviceWayUrl = `${ownerUrl}?options=${encodeURIComponent(Object.entries(serviceWay).map(([k, v]) => `-c ${k}=${v}`).join(" "))}`;

interface Service {
  name: string;
  base: string;
  pid: number;
  logFile: string;
  stop: () => Promise<void>;
}

/** The executable on a free port, as ranges.ts starts it but logging requests (info) to a file. */
async function startService(name: string, dbUrl: string): Promise<Service> {
  const probe = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = probe.port!;
  await probe.stop(true);
  const logFile = `${TMP}/${name}.log`;
  const proc = Bun.spawn([BINARY, "serve"], {
    // The answer cache off: a range asked again would be answered from memory, not read.
    env: { PATH: "/usr/bin:/bin", DATABASE_URL: dbUrl, PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "info", ANSWER_CACHE_MB: "0" },
    stdout: Bun.file(logFile),
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/readyz`)).status === 200) break;
    } catch {
      // not listening yet
    }
    if (i > 3000) throw new Error(`${name}: the service did not get ready`);
    await Bun.sleep(10);
  }
  return { name, base, pid: proc.pid, logFile, stop: async () => void (proc.kill("SIGTERM"), await proc.exited) };
}

const costsUrl = (s: Service, r: Range) => `${s.base}/external/v1/product-costs?month_from=${r.from}&month_to=${r.to}&segment=${SEGMENT}`;

interface Timing {
  ttfb: number;
  total: number;
  bytes: number;
  /** x-request-id: its "request" log line says how long the rows took to come (first_rows_ms). */
  id: string;
}

/** One request, body discarded: ms to first and to last byte. */
function get(s: Service, r: Range): Timing {
  const c = Bun.spawnSync(["curl", "-s", "-o", "/dev/null", "-w", "%{http_code} %{time_starttransfer} %{time_total} %{size_download} %header{x-request-id}", "-H", `Authorization: Bearer ${KEY}`, costsUrl(s, r)], { stdout: "pipe" });
  const [status, ttfb, total, bytes, id] = c.stdout.toString().split(" ");
  if (status !== "200") throw new Error(`${s.name}, ${r.name}: HTTP ${status}`);
  return { ttfb: Number(ttfb) * 1000, total: Number(total) * 1000, bytes: Number(bytes), id: id! };
}

/** One more request, kept: the body's sha256 and whether it had an ETag (untimed). */
function fetchKept(s: Service, r: Range): { sha: string; etag: boolean; body: string } {
  const body = `${TMP}/${s.name}-${r.from}-${r.to}.body`;
  const headers = `${body}.headers`;
  const c = Bun.spawnSync(["curl", "-s", "-D", headers, "-o", body, "-w", "%{http_code}", "-H", `Authorization: Bearer ${KEY}`, costsUrl(s, r)], { stdout: "pipe" });
  if (c.stdout.toString() !== "200") throw new Error(`${s.name}, ${r.name}: HTTP ${c.stdout.toString()}`);
  return { sha: createHash("sha256").update(readFileSync(body)).digest("hex"), etag: /^etag:/im.test(readFileSync(headers, "utf8")), body };
}

/** Peak resident set size of a process so far, MiB. */
const peakRss = (pid: number) => Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024;

/** The service's log: its "request" lines by source and status, and every line above info. */
function readLog(s: Service): { requests: Record<string, number>; notices: string[]; firstRows: Map<string, number>; commit: string } {
  let commit = "?";
  const requests: Record<string, number> = {};
  const notices: string[] = [];
  const firstRows = new Map<string, number>();
  for (const line of readFileSync(s.logFile, "utf8").split("\n").filter(Boolean)) {
    const e = JSON.parse(line) as { level: string; msg: string; source?: string; status?: number; why?: string; request_id?: string; first_rows_ms?: number; commit?: string };
    if (e.msg === "listening") commit = e.commit ?? commit; // what the executable was built from, not the checkout's HEAD
    if (e.request_id && e.first_rows_ms !== undefined) firstRows.set(e.request_id, e.first_rows_ms);
    // A "request" line names its source only when it is the daily rows.
    const key = `${e.status} ${e.source ?? "rollup"}`;
    if (e.msg === "request") requests[key] = (requests[key] ?? 0) + 1;
    if (e.level !== "info" && e.level !== "debug") notices.push(`${e.level} "${e.msg}"${e.why ? ` (${e.why})` : ""}`);
  }
  return { requests, notices, firstRows, commit };
}

// The role that may read the two contract tables and nothing else: the service then reads the
// daily rows (it may not read the migrations' record nor the rollup). Made anew each run.
function dropRole(): void {
  psql(ownerUrl, `do $$ begin if exists (select from pg_roles where rolname = '${ROLE}') then drop owned by ${ROLE}; drop role ${ROLE}; end if; end $$;`);
}
dropRole();
psql(ownerUrl, `create role ${ROLE} login; grant connect on database ${db} to ${ROLE}; grant select on products, product_daily_costs to ${ROLE};`);

const started = new Date().toISOString();
const loadBefore = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
// Whatever waits in the change log, folded first (as ranges.ts): the rollup read at its best.
const refreshed = Bun.spawnSync([BINARY, "refresh"], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: ownerUrl }, stdout: "ignore", stderr: "inherit" });
if (refreshed.exitCode !== 0) throw new Error("refresh failed");
const dailyRows = Number(psql(ownerUrl, "select count(*) from product_daily_costs;").trim());
const products = Number(psql(ownerUrl, "select count(*) from products;").trim());

const rollup = await startService("rollup", ownerUrl);
const daily = await startService("daily", roleUrl).catch(async (err) => {
  await rollup.stop();
  dropRole();
  throw err;
});
interface Row {
  range: Range;
  naive: number;
  naiveSerial: number;
  /** As the service runs it: its settings, a parallel plan, no workers. */
  naiveServiceWay: number;
  daily: { first: Timing; ttfb: number; total: number; ids: string[] };
  rollup: { first: Timing; ttfb: number; total: number; ids: string[] };
  bytes: number;
}
const rows: Row[] = [];
let rss: { daily: number; rollup: number };
try {
  const ready = { daily: await (await fetch(`${daily.base}/readyz`)).text(), rollup: await (await fetch(`${rollup.base}/readyz`)).text() };
  if (!ready.daily.includes('"source":"daily rows"')) throw new Error(`the daily service does not read the daily rows: /readyz says ${ready.daily}`);
  if (ready.rollup.includes('"source":"daily rows"')) throw new Error(`the rollup service reads the daily rows: /readyz says ${ready.rollup}`);

  for (const range of RANGES) {
    log(`${range.name} (${range.from}..${range.to})`);
    const first = { daily: get(daily, range), rollup: get(rollup, range) };
    const repeats: { daily: Timing[]; rollup: Timing[] } = { daily: [], rollup: [] };
    for (let i = 0; i < runs; i++) {
      repeats.daily.push(get(daily, range));
      repeats.rollup.push(get(rollup, range));
    }
    const summary = (first: Timing, xs: Timing[]) => ({ first, ttfb: median(xs.map((x) => x.ttfb)), total: median(xs.map((x) => x.total)), ids: xs.map((x) => x.id) });
    const naive = median(naiveTimes(ownerUrl, range, runs));
    const naiveSerial = median(naiveTimes(ownerUrl, range, runs, true));
    const naiveServiceWay = median(naiveTimes(serviceWayUrl, range, runs));

    // The same bytes from both sources, and the daily one without a version (no ETag).
    const kept = { daily: fetchKept(daily, range), rollup: fetchKept(rollup, range) };
    if (kept.daily.sha !== kept.rollup.sha) throw new Error(`${range.name}: the two sources' answers differ: ${kept.daily.body} vs ${kept.rollup.body}`);
    if (kept.daily.etag) throw new Error(`${range.name}: the daily source's answer has an ETag: it read the rollup`);
    if (!kept.rollup.etag) throw new Error(`${range.name}: the rollup's answer has no ETag: it read the daily rows`);
    for (const k of [kept.daily, kept.rollup]) rmSync(k.body); // kept only when they differ (up to 10 MB each)
    rows.push({ range, naive, naiveSerial, naiveServiceWay, daily: summary(first.daily, repeats.daily), rollup: summary(first.rollup, repeats.rollup), bytes: first.daily.bytes });
  }
  rss = { daily: peakRss(daily.pid), rollup: peakRss(rollup.pid) };
} finally {
  await daily.stop();
  await rollup.stop();
  dropRole();
}
const logs = { daily: readLog(daily), rollup: readLog(rollup) };
for (const [name, want] of [["daily", "daily"], ["rollup", "rollup"]] as const) {
  const odd = Object.keys(logs[name].requests).filter((k) => k.startsWith("200 ") && !k.endsWith(` ${want}`));
  if (odd.length > 0) throw new Error(`the ${name} service logged requests ${odd.join(", ")}`);
}

const both = (t: { ttfb: number; total: number }) => `${ms(t.ttfb)} / ${ms(t.total)}`;
const x = (v: number) => v.toFixed(2);
const lines = [
  `## Reads from the daily rows against the naive GROUP BY and the rollup, ${today}, \`${db}\``,
  "",
  `- Command: \`bun tests/bench/daily-source.ts ${argv.join(" ")}\` (checkout at ${Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim()}; dist/product-cost-export built from ${logs.daily.commit})`,
  `- Date: ${started} to ${new Date().toISOString()}; load average before: ${loadBefore}, after: ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`,
  `- ${products.toLocaleString("en")} products, ${dailyRows.toLocaleString("en")} daily rows; segment=${SEGMENT}; ${runs} runs`,
  `- daily: the service as role \`${ROLE}\` (SELECT on products and product_daily_costs only; /readyz "source":"daily rows", no ETag); rollup: the service as the owner. The two answers to every range: the same bytes (sha256).`,
  "- naive: tests/db/naive_product_costs.sql in psql, prepared, output to /dev/null, median; parallel (PostgreSQL's defaults) / serial (max_parallel_workers_per_gather = 0) / the service's way (" +
    Object.entries(serviceWay).map(([k, v]) => `${k}=${v}`).join(", ") +
    ": its session settings, and no parallel worker launched, as its cursor runs; a plan made for workers runs without).",
  "- Service columns: time to first byte / to last byte (curl), first read, then the median of the next runs. daily ÷ naive serial: medians to last byte; target ≤ 1.10.",
  "- daily: rows came: the median of the service's own first_rows_ms (its \"request\" log line: the statement asked until its first batch of rows, i.e. the GROUP BY and sort done), the database's share of the time to last byte.",
  "",
  "| range | body | naive: parallel / serial / the service's way | daily: first | daily: median | rollup: first | rollup: median | daily ÷ naive serial | daily ÷ naive the service's way | daily: rows came | rollup speed-up over daily |",
  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
  ...rows.map((r) => {
    const vs = r.daily.total / r.naiveSerial;
    return (
      `| ${r.range.name} (${r.range.from}..${r.range.to}) | ${(r.bytes / 2 ** 20).toFixed(1)} MiB | ${ms(r.naive)} / ${ms(r.naiveSerial)} / ${ms(r.naiveServiceWay)} | ${both(r.daily.first)} | ${both(r.daily)} | ` +
      `${both(r.rollup.first)} | ${both(r.rollup)} | ${x(vs)}${vs <= 1.1 ? "" : " **over**"} | ${x(r.daily.total / r.naiveServiceWay)} | ${ms(median(r.daily.ids.map((id) => logs.daily.firstRows.get(id)!)))} | ${x(r.daily.total / r.rollup.total)}× |`
    );
  }),
  "",
  `Peak RSS (VmHWM) after the run: daily ${rss!.daily.toFixed(0)} MiB, rollup ${rss!.rollup.toFixed(0)} MiB.`,
  "",
  ...(["daily", "rollup"] as const).map(
    (n) => `Log of the ${n} service: requests ${JSON.stringify(logs[n].requests)}; above info: ${logs[n].notices.length ? logs[n].notices.join("; ") : "none"}.`,
  ),
  "",
];
const report = lines.join("\n");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
process.stdout.write(report);
