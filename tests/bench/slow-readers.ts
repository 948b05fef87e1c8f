// Slow readers against normal clients: 16 clients in a loop, alone, then beside 12 clients
// that read their answers at 2 KB/s, with the service's read-ahead on (the default) and off
// (RESPONSE_BUFFER_MB=0, every answer at its client's pace, as before the read-ahead).
// Target (issue 11): with the slow readers, the normal clients' p99 within 2x of their p99
// alone, and no 503. Not part of `bun test`.
//
//   bun tests/bench/slow-readers.ts                    # 20,000 products, 15 s per phase
//   bun tests/bench/slow-readers.ts --products 5000 --duration 10 --no-build
//
// BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server; the database
// pce_slow_<products> is made there with tests/bench/generate.sql (reused when present).
// Writes a Markdown report to stdout and to tests/bench/results/<date>-slow-readers.md.

import { readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { join, resolve } from "node:path";
import postgres from "postgres";

const ROOT = resolve(import.meta.dir, "../..");
const BINARY = join(ROOT, "dist/product-cost-export");
const KEY = "slow-readers-key-5b1c0f2e";
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const products = Number(option("products", "20000"));
const duration = Number(option("duration", "15")) * 1000;
const SLOW = 12;
const NORMAL = 16;
const SLOW_RATE = 2048; // bytes a second
const SERVER = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const dbName = `pce_slow_${products}`;
const dbUrl = `${SERVER}/${dbName}`;
const NORMAL_QUERY = "month_from=2026-10-15&month_to=2026-10-15&segment=normal"; // one day
const SLOW_QUERY = "month_from=2026-09-01&month_to=2026-09-30&segment=all"; // one month, the largest common answer
const log = (msg: string) => console.error(`slow-readers: ${msg}`);

function psql(url: string, script: string, vars: Record<string, string> = {}): string {
  const args = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", ...Object.entries(vars).flatMap(([k, v]) => ["-v", `${k}=${v}`]), url];
  const r = Bun.spawnSync(args, { stdin: Buffer.from(script), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}

// ---- the dataset
if (!argv.includes("--no-build")) {
  log("building dist/product-cost-export");
  if (Bun.spawnSync(["bash", "build.sh"], { cwd: ROOT, stdout: "inherit", stderr: "inherit" }).exitCode !== 0) throw new Error("build failed");
}
const exists = psql(`${SERVER}/postgres`, `select 1 from pg_database where datname = '${dbName}';`).trim() === "1";
if (!exists) {
  log(`creating ${dbName}: ${products} products, 730 days`);
  psql(`${SERVER}/postgres`, `create database ${dbName};`);
  psql(dbUrl, readFileSync(join(ROOT, "sql/migrations/0001_contract_tables.sql"), "utf8"));
  psql(dbUrl, readFileSync(join(ROOT, "tests/bench/generate.sql"), "utf8"), { products: String(products) });
}
const migrated = Bun.spawnSync([BINARY, "migrate"], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: dbUrl }, stdout: "ignore", stderr: "inherit" });
if (migrated.exitCode !== 0) throw new Error("migrate failed");
psql(dbUrl, "vacuum analyze;");

// ---- clients
interface Sample {
  status: number;
  ms: number;
}

/** NORMAL clients asking for one day in a loop until `until`: each answer's status and time to its last byte. */
async function normalClients(base: string, until: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  await Promise.all(
    Array.from({ length: NORMAL }, async () => {
      while (performance.now() < until) {
        const started = performance.now();
        try {
          const res = await fetch(`${base}/external/v1/product-costs?${NORMAL_QUERY}`, {
            headers: { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" },
          });
          await res.arrayBuffer();
          samples.push({ status: res.status, ms: performance.now() - started });
        } catch {
          samples.push({ status: 0, ms: performance.now() - started });
        }
      }
    }),
  );
  return samples;
}

/** A client that reads its answer at SLOW_RATE bytes a second (on average), until stopped. */
function slowReader(port: number): { status: () => string; received: () => number; stop: () => void } {
  const socket = net.connect(port, "127.0.0.1");
  let received = 0;
  let head = "";
  const started = performance.now();
  socket.on("error", () => {});
  socket.on("data", (chunk: Buffer) => {
    if (head.length < 12) head += chunk.toString("latin1", 0, 12);
    received += chunk.length;
    socket.pause();
    // Resume when the average rate is back under SLOW_RATE.
    const due = (received / SLOW_RATE) * 1000 - (performance.now() - started);
    setTimeout(() => socket.resume(), Math.max(0, due));
  });
  socket.write(
    `GET /external/v1/product-costs?${SLOW_QUERY} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\nAccept-Encoding: identity\r\n\r\n`,
  );
  return { status: () => head.slice(9, 12), received: () => received, stop: () => void socket.destroy() };
}

function summary(samples: Sample[]) {
  const ok = samples.filter((s) => s.status === 200).map((s) => s.ms).sort((a, b) => a - b);
  const at = (q: number) => ok[Math.min(ok.length - 1, Math.floor(q * ok.length))] ?? NaN;
  const statuses = new Map<number, number>();
  for (const s of samples) statuses.set(s.status, (statuses.get(s.status) ?? 0) + 1);
  return { requests: samples.length, p50: at(0.5), p99: at(0.99), statuses: Object.fromEntries(statuses) as Record<string, number> };
}

async function phase(name: string, env: Record<string, string>, withSlow: boolean) {
  const port = await freePort();
  const proc = Bun.spawn([BINARY, "serve"], {
    env: { PATH: "/usr/bin:/bin", DATABASE_URL: dbUrl, PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn", ...env },
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
    if (i > 600) throw new Error("the service did not become ready");
    await Bun.sleep(50);
  }
  await normalClients(base, performance.now() + 2000); // warm-up
  const slow = withSlow ? Array.from({ length: SLOW }, () => slowReader(port)) : [];
  await Bun.sleep(withSlow ? 2000 : 0); // the slow readers have their answers under way
  const sessions = postgres(dbUrl, { max: 1, onnotice: () => {} });
  let maxSessions = 0;
  const watch = setInterval(async () => {
    const [row] = await sessions<{ n: number }[]>`
      select count(*)::int as n from pg_stat_activity where datname = current_database() and split_part(application_name, ' ', 1) = 'product-cost-export' and xact_start is not null`;
    maxSessions = Math.max(maxSessions, row!.n);
  }, 100);
  const samples = await normalClients(base, performance.now() + duration);
  clearInterval(watch);
  await sessions.end();
  const slowStatus = slow.map((s) => s.status());
  const slowBytes = slow.reduce((n, s) => n + s.received(), 0);
  slow.forEach((s) => s.stop());
  const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${proc.pid}/status`, "utf8"));
  proc.kill("SIGTERM");
  await proc.exited;
  const s = summary(samples);
  log(`${name}: ${JSON.stringify(s)}`);
  return { name, ...s, slowStatus, slowBytes, maxSessions, peakRssMb: peak ? Number(peak[1]) / 1024 : NaN };
}

const alone = await phase("16 normal clients alone", {}, false);
const withReadAhead = await phase("beside 12 slow readers (read-ahead on, the default)", {}, true);
const withoutReadAhead = await phase("beside 12 slow readers, RESPONSE_BUFFER_MB=0 (no read-ahead)", { RESPONSE_BUFFER_MB: "0" }, true);

const date = new Date().toISOString().slice(0, 10);
const commit = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim();
const fmt = (x: number) => (Number.isNaN(x) ? "–" : x >= 100 ? x.toFixed(0) : x.toFixed(1));
const statuses = (r: Record<string, number>) => Object.entries(r).map(([k, n]) => `${n} × ${k === "0" ? "failed" : k}`).join(", ");
const row = (p: Awaited<ReturnType<typeof phase>>) =>
  `| ${p.name} | ${p.requests} | ${statuses(p.statuses)} | ${fmt(p.p50)} / ${fmt(p.p99)} ms | ${fmt(p.p99 / alone.p99)}× | ${p.maxSessions} | ${fmt(p.peakRssMb)} MB |`;
const report = [
  `## Slow readers, ${date}, ${products.toLocaleString("en")} products`,
  "",
  `- Command: \`bun tests/bench/slow-readers.ts${argv.length ? " " + argv.join(" ") : ""}\` (commit ${commit})`,
  `- ${NORMAL} normal clients ask for one day (segment normal) in a loop for ${duration / 1000} s each phase; ${SLOW} slow readers ask for one month (segment all) and read it at ${SLOW_RATE / 1024} KB/s. DB_POOL_MAX 10 (9 read sessions), everything else the defaults. Latency: request sent to last byte received.`,
  "",
  "| phase | normal requests | statuses | normal p50 / p99 | p99 ÷ p99 alone | most read sessions busy | service peak RSS |",
  "|---|---:|---|---:|---:|---:|---:|",
  row(alone),
  row(withReadAhead),
  row(withoutReadAhead),
  "",
  `Slow readers' answers: ${withReadAhead.slowStatus.join(" ")} (read-ahead on), ${withoutReadAhead.slowStatus.join(" ")} (off).`,
  "",
  `Target: p99 beside the slow readers within 2× of p99 alone, and no 503: ${withReadAhead.p99 <= 2 * alone.p99 && !withReadAhead.statuses["503"] ? "met" : "**missed**"} (${fmt(withReadAhead.p99 / alone.p99)}×, ${withReadAhead.statuses["503"] ?? 0} × 503).`,
  "",
].join("\n");
console.log(report);
writeFileSync(join(ROOT, `tests/bench/results/${date}-slow-readers.md`), report);
