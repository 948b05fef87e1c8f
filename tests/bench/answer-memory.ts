// What the answer cache costs (issue 30): peak RSS under a mixed load at the defaults and with
// the cache off, and first reads with the cache against first reads without it. Not part of
// `bun test`.
//
//   bun tests/bench/answer-memory.ts [--database pce_bench_50k] [--duration 30] [--binary dist/product-cost-export] [--runs 3] [--previous <executable>]
//
// Mixed load: 16 connections asking 50 distinct ranges (one day, a week, a month, a quarter;
// both segments) in turn, a third each identity, gzip and br, for --duration seconds; the
// service's peak RSS (VmHWM) at the defaults (ANSWER_CACHE_MB=256, RESPONSE_BUFFER_MB=128)
// and with ANSWER_CACHE_MB=0, --runs times each, alternated; with --previous, the same load at
// the defaults on that executable too, alternated with this one.
// First reads: 18 ranges of every shape no instance has read yet, each asked once of an
// instance with the cache and once of one without, alternated (which goes first alternates
// too), on the same database.

import { readFileSync } from "node:fs";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";

const ROOT = resolve(import.meta.dir, "../..");
const KEY = "bench-key-0123456789abcdef";
const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const database = option("database", "pce_bench_50k");
const duration = Number(option("duration", "30"));
const runs = Number(option("runs", "3"));
const binary = resolve(option("binary", join(ROOT, "dist/product-cost-export")));
const previous = argv.includes("--previous") ? resolve(option("previous", "")) : undefined;
const SERVER = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const auth = { authorization: `Bearer ${KEY}` };
const log = (msg: string) => console.error(`answer-memory: ${msg}`);

interface Service {
  proc: Subprocess;
  base: string;
  stop(): Promise<void>;
}

async function start(env: Record<string, string>, executable = binary): Promise<Service> {
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port!;
  probe.stop(true);
  const proc = Bun.spawn([executable, "serve"], {
    env: { PATH: "/usr/bin:/bin", DATABASE_URL: `${SERVER}/${database}`, PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  for (const t = performance.now(); ; await Bun.sleep(20)) {
    if (performance.now() - t > 60_000) throw new Error("the service did not start within 60 s");
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) break;
  }
  return { proc, base: `http://127.0.0.1:${port}/external/v1/product-costs?`, stop: async () => void (proc.kill("SIGTERM"), await proc.exited) };
}

const day = (offset: number) => new Date(Date.UTC(2024, 10, 1) + offset * 86_400_000).toISOString().slice(0, 10);
const target = (from: string, to: string, segment: string) => `month_from=${from}&month_to=${to}&segment=${segment}`;

function peakRssMb(pid: number): number {
  const m = /^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function mixedLoad(env: Record<string, string>, executable = binary): Promise<{ peak: number; served: number }> {
  const service = await start(env, executable);
  const ranges = Array.from({ length: 50 }, (_, i) => target(day((i * 37) % 700), day(((i * 37) % 700) + [0, 6, 29, 90][i % 4]!), ["normal", "all"][i % 2]!));
  let served = 0;
  const until = performance.now() + duration * 1000;
  try {
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        for (let i = w; performance.now() < until; i += 16) {
          const coding = ["br", "gzip", "identity"][i % 3]!;
          const res = await fetch(service.base + ranges[i % ranges.length]!, { headers: { ...auth, "accept-encoding": coding } });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`mixed load: ${res.status}`);
          served++;
        }
      }),
    );
    return { peak: peakRssMb(service.proc.pid), served };
  } finally {
    await service.stop();
  }
}

async function timedRead(service: Service, query: string): Promise<number> {
  const t = performance.now();
  const res = await fetch(service.base + query, { headers: { ...auth, "accept-encoding": "identity" } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`first read: ${res.status}`);
  return performance.now() - t;
}

const lines: string[] = [];
const p = (s = "") => (lines.push(s), console.log(s));
const commit = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe" }).stdout.toString().trim();
p(`## What the answer cache costs, ${new Date().toISOString().slice(0, 10)}`);
p();
p(`- Command: \`bun tests/bench/answer-memory.ts ${argv.join(" ")}\`; commit ${commit}; database ${database}; ${cpus().length} × ${cpus()[0]?.model}`);

const peaks: Record<string, number[]> = { "256": [], "0": [], previous: [] };
for (let run = 0; run < runs; run++) {
  for (const cache of previous ? ["256", "previous", "0"] : ["256", "0"]) {
    const { peak, served } = await mixedLoad({ ANSWER_CACHE_MB: cache === "0" ? "0" : "256" }, cache === "previous" ? previous : binary);
    peaks[cache]!.push(peak);
    log(`mixed load, ${cache === "previous" ? "previous executable at the defaults" : `ANSWER_CACHE_MB=${cache}`}: peak RSS ${peak.toFixed(0)} MB (${served} requests)`);
  }
}
const fmt = (xs: number[]) => `${Math.max(...xs).toFixed(0)} MB (runs: ${xs.map((x) => x.toFixed(0)).join(", ")})`;
p(`- Mixed load (${duration} s, 16 connections, 50 ranges, identity/gzip/br), peak RSS: defaults (ANSWER_CACHE_MB=256, RESPONSE_BUFFER_MB=128) ${fmt(peaks["256"]!)}; ANSWER_CACHE_MB=0 ${fmt(peaks["0"]!)}` + (previous ? `; the previous executable at the defaults ${fmt(peaks.previous!)}` : ""));

// First reads: ranges no instance has read (offsets apart from the mixed load's days are not
// needed: each instance is new, and PostgreSQL's buffers are warmed by the other instance's read).
const cached = await start({ ANSWER_CACHE_MB: "256" });
const uncached = await start({ ANSWER_CACHE_MB: "0" });
const shapes = [0, 6, 13, 29, 45, 90, 181, 364, 729];
const withCache: number[] = [];
const without: number[] = [];
try {
  for (let i = 0; i < 18; i++) {
    const length = shapes[i % shapes.length]!;
    const from = day(((i * 53) % Math.max(1, 730 - length)));
    const q = target(from, day(Math.min(729, ((i * 53) % Math.max(1, 730 - length)) + length)), i % 2 ? "all" : "normal");
    const order = i % 2 ? [cached, uncached] : [uncached, cached];
    const times = new Map<Service, number>();
    for (const s of order) times.set(s, await timedRead(s, q));
    withCache.push(times.get(cached)!);
    without.push(times.get(uncached)!);
  }
} finally {
  await cached.stop();
  await uncached.stop();
}
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ratio = mean(withCache) / mean(without);
p(`- First reads, 18 ranges (one day to two years), alternated: with the cache ${mean(withCache).toFixed(0)} ms mean, without ${mean(without).toFixed(0)} ms; with ÷ without ${(100 * ratio).toFixed(0)} %; per range with ÷ without: ${withCache.map((w, i) => ((100 * w) / without[i]!).toFixed(0)).join(", ")} %`);
p(`- Load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
