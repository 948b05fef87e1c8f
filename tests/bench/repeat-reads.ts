// Repeated reads: the answer cache and conditional requests (docs/api.md, "Caching") against
// nginx serving the very same bytes from a file with sendfile, in one run. Not part of `bun test`.
//
//   bun run bench                                    # first: generates pce_bench_50k
//   bun tests/bench/repeat-reads.ts [--scale 50k] [--duration 10] [--previous <executable>]
//
// Needs the dataset of tests/bench/bench.ts (pce_bench_<scale>, migrated by this build) and
// nginx (Debian's nginx-light, installed with apt-get when missing). Per scenario:
//   first read       the service with the cache off (ANSWER_CACHE_MB=0): every read is a first
//                    read; with --previous, the same for an older executable (today's), the
//                    two alternated, 5 reads each, median;
//   repeated read    16 connections asking the same range again and again (answered from the
//                    cache), req/s, against nginx (one worker, sendfile) serving the same
//                    bytes from a file;
//   304              16 connections sending If-None-Match with the answer's ETag, req/s.
// Then peak RSS (VmHWM) under 16 connections mixing 50 ranges, against the cache's bound.
// Writes a Markdown report to stdout and to tests/bench/results/<date>-repeat-reads-<scale>.md.

import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { query, SCENARIOS } from "./scenarios.ts";

const ROOT = resolve(import.meta.dir, "../..");
const KEY = "bench-key-0123456789abcdef";
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const scale = option("scale", "50k");
const duration = Number(option("duration", "10"));
const binary = resolve(option("binary", join(ROOT, "dist/product-cost-export")));
const previous = argv.includes("--previous") ? resolve(option("previous", "")) : undefined;
const SERVER = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const dbUrl = `${SERVER}/pce_bench_${scale}`;
const today = new Date().toISOString().slice(0, 10);
const out = join(ROOT, `tests/bench/results/${today}-repeat-reads-${scale}.md`);
const CACHE_MB = 256; // the default of ANSWER_CACHE_MB

const log = (msg: string) => console.error(`repeat-reads: ${msg}`);
const auth = { authorization: `Bearer ${KEY}` };

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = s.port!;
  s.stop(true);
  return port;
}

async function startService(executable: string, env: Record<string, string>): Promise<{ proc: Subprocess; base: string; stop(): Promise<void> }> {
  const port = await freePort();
  const proc = Bun.spawn([executable, "serve"], {
    env: { PATH: "/usr/bin:/bin", DATABASE_URL: dbUrl, PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  const base = `http://127.0.0.1:${port}/external/v1/product-costs?`;
  for (const started = performance.now(); ; await Bun.sleep(20)) {
    if (performance.now() - started > 60_000) throw new Error(`${executable} did not answer within 60 s`);
    try {
      if ((await fetch(`http://127.0.0.1:${port}/healthz`)).status === 200) break;
    } catch {
      // not listening yet
    }
  }
  return { proc, base, stop: async () => void (proc.kill("SIGTERM"), await proc.exited) };
}

function nginx(root: string, port: number): Subprocess {
  if (!Bun.which("nginx") && !Bun.which("/usr/sbin/nginx")) {
    log("installing nginx-light with apt-get");
    const r = Bun.spawnSync(["apt-get", "install", "-y", "-q", "nginx-light"], { stdout: "ignore", stderr: "inherit" });
    if (r.exitCode !== 0) throw new Error("cannot install nginx-light");
  }
  const conf = join(root, "nginx.conf");
  writeFileSync(
    conf,
    `daemon off; worker_processes 1; error_log stderr error; pid ${join(root, "nginx.pid")};
events { worker_connections 1024; }
http { access_log off; sendfile on; tcp_nopush on; keepalive_requests 1000000;
  client_body_temp_path ${root}; proxy_temp_path ${root}; fastcgi_temp_path ${root}; uwsgi_temp_path ${root}; scgi_temp_path ${root};
  server { listen 127.0.0.1:${port}; root ${root}; default_type application/json; } }
`,
  );
  return Bun.spawn([Bun.which("nginx") ?? "/usr/sbin/nginx", "-c", conf, "-p", root], { stdout: "ignore", stderr: "inherit" });
}

interface Load {
  reqPerSec: number;
  p50: number;
  statuses: string;
}

async function autocannon(url: string, connections: number, headers: Record<string, string>): Promise<Load> {
  const args = [Bun.which("node") ?? "bun", join(ROOT, "node_modules/autocannon/autocannon.js"), "-j", "-c", String(connections), "-d", String(duration), "-t", "120"];
  for (const [k, v] of Object.entries(headers)) args.push("-H", `${k}=${v}`);
  args.push(url);
  const proc = Bun.spawn(args, { stdout: "pipe", stderr: "ignore" });
  const r = JSON.parse(await new Response(proc.stdout).text());
  await proc.exited;
  const statuses = Object.entries({ "2xx": r["2xx"], "3xx": r["3xx"], "4xx": r["4xx"], "5xx": r["5xx"], errors: r.errors })
    .filter(([, n]) => n)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return { reqPerSec: r.requests.average, p50: r.latency.p50, statuses };
}

function peakRss(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timedRead(url: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(url, { headers: { ...auth, "accept-encoding": "identity" } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
  return performance.now() - t;
}

// ---- first reads: the cache off, against the previous executable
const first: Record<string, { now: number; before?: number }> = {};
{
  const uncached = await startService(binary, { ANSWER_CACHE_MB: "0" });
  // The previous executable with its cache off too, if it has one (an unknown setting is ignored).
  const old = previous ? await startService(previous, { ANSWER_CACHE_MB: "0" }) : undefined;
  for (const s of SCENARIOS) {
    await timedRead(uncached.base + query(s)); // warm PostgreSQL's buffers for both alike
    const now: number[] = [];
    const before: number[] = [];
    for (let i = 0; i < 5; i++) {
      now.push(await timedRead(uncached.base + query(s)));
      if (old) before.push(await timedRead(old.base + query(s)));
    }
    first[s.name] = { now: median(now), ...(old ? { before: median(before) } : {}) };
    log(`${s.name}: first read ${first[s.name]!.now.toFixed(0)} ms${old ? `, previous ${first[s.name]!.before!.toFixed(0)} ms` : ""}`);
  }
  await uncached.stop();
  await old?.stop();
}

// ---- repeated reads and 304s, against nginx with the same bytes
const files = mkdtempSync(join(tmpdir(), "pce-repeat-"));
const nginxPort = await freePort();
const web = nginx(files, nginxPort);
const service = await startService(binary, { ANSWER_CACHE_MB: String(CACHE_MB) });
const rows: { name: string; bytes: number; svc: Load; ngx: Load; revalidated: Load }[] = [];
try {
  for (const s of SCENARIOS) {
    const res = await fetch(service.base + query(s), { headers: { ...auth, "accept-encoding": "identity" } });
    const body = new Uint8Array(await res.arrayBuffer());
    const etag = res.headers.get("etag");
    if (res.status !== 200 || !etag) throw new Error(`${s.name}: ${res.status}, etag ${etag}`);
    const file = `${s.name.replace(/ /g, "-")}.json`;
    writeFileSync(join(files, file), body);
    const check = new Uint8Array(await (await fetch(`http://127.0.0.1:${nginxPort}/${file}`)).arrayBuffer());
    if (!Buffer.from(check).equals(Buffer.from(body))) throw new Error("nginx serves other bytes");
    const svc = await autocannon(service.base + query(s), 16, auth);
    const ngx = await autocannon(`http://127.0.0.1:${nginxPort}/${file}`, 16, {});
    const revalidated = await autocannon(service.base + query(s), 16, { ...auth, "if-none-match": etag });
    rows.push({ name: s.name, bytes: body.byteLength, svc, ngx, revalidated });
    log(`${s.name}: service ${svc.reqPerSec.toFixed(0)} req/s, nginx ${ngx.reqPerSec.toFixed(0)} req/s, 304 ${revalidated.reqPerSec.toFixed(0)} req/s`);
  }
} finally {
  await service.stop();
  web.kill("SIGTERM");
  await web.exited;
}

// ---- memory: 16 connections mixing 50 ranges (first reads and repeats), the cache bounded
const mixed = await startService(binary, { ANSWER_CACHE_MB: String(CACHE_MB) });
const ranges = Array.from({ length: 50 }, (_, i) => {
  const start = new Date(Date.UTC(2024, 10, 1) + ((i * 37) % 700) * 86_400_000).toISOString().slice(0, 10);
  const end = new Date(Date.parse(start) + [0, 6, 29, 90][i % 4]! * 86_400_000).toISOString().slice(0, 10);
  return { from: start, to: end, segment: ["normal", "all"][i % 2]! };
});
let served = 0;
const until = performance.now() + duration * 3 * 1000;
await Promise.all(
  Array.from({ length: 16 }, async (_, w) => {
    for (let i = w; performance.now() < until; i += 16) {
      const res = await fetch(mixed.base + query(ranges[i % ranges.length]!), { headers: { ...auth, "accept-encoding": i % 3 === 0 ? "br" : i % 3 === 1 ? "gzip" : "identity" } });
      await res.arrayBuffer();
      served++;
    }
  }),
);
const peak = peakRss(mixed.proc.pid);
await mixed.stop();

// ---- report
const lines: string[] = [];
const p = (s = "") => lines.push(s);
const commit = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim();
p(`# Repeated reads, ${scale}: ${today}`);
p();
p(`- Command: \`bun tests/bench/repeat-reads.ts ${argv.join(" ")}\`; commit ${commit}; ${cpus().length} cores (${cpus()[0]?.model}); load generator autocannon 9.0.0, ${duration} s per run`);
p(`- Service: \`${binary}\` with ANSWER_CACHE_MB=${CACHE_MB}; nginx: one worker, sendfile, the same bytes from a file`);
p();
p("| range | answer | first read (cache off) | previous executable | repeated read, 16 conn. | nginx, same bytes | service ÷ nginx | 304s, 16 conn. |");
p("|---|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) {
  const f = first[r.name]!;
  p(
    `| ${r.name} | ${(r.bytes / 2 ** 20).toFixed(1)} MB | ${f.now.toFixed(0)} ms | ${f.before === undefined ? "–" : `${f.before.toFixed(0)} ms`} | ` +
      `${r.svc.reqPerSec.toFixed(0)} req/s | ${r.ngx.reqPerSec.toFixed(0)} req/s | ${((100 * r.svc.reqPerSec) / r.ngx.reqPerSec).toFixed(0)} % | ${r.revalidated.reqPerSec.toFixed(0)} req/s (${r.revalidated.statuses}) |`,
  );
}
p();
p(`Peak RSS under 16 connections mixing 50 ranges (${served} requests, identity, gzip and br): ${peak.toFixed(0)} MB; the cache's bound ${CACHE_MB} MB + 150 MB = ${CACHE_MB + 150} MB.`);
const report = lines.join("\n") + "\n";
process.stdout.write(report);
writeFileSync(out, report);
log(`wrote ${out}`);
