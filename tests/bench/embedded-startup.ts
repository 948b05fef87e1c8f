// Start-up of the compiled executable: process start → first 200 from the endpoint, and the
// CPU time the process spent until then (user + system, from /proc).
//   bun tests/bench/embedded-startup.ts [runs]        (build first: bash build.sh)
//   LOAD=2 bun tests/bench/embedded-startup.ts 7      (with two busy loops beside it, a load of 2)
//   BINARY=/tmp/other/product-cost-export ...         (another build, to compare)
// Modes: embedded demo data in memory (the default), a warm --data-dir, and, when
// DATABASE_URL is set, an external PostgreSQL (migrated first). Prints a Markdown table.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const BINARY = process.env.BINARY ?? resolve(import.meta.dir, "../../dist/product-cost-export");
const RUNS = Number(process.argv[2] ?? 7);
const KEY = "startup-bench-key";

async function freePort(): Promise<number> {
  const s = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = s.port!;
  await s.stop(true);
  return port;
}

/** The CPU seconds `pid` has used so far (utime + stime; clock ticks of 1/100 s). */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await Bun.file(`/proc/${pid}/stat`).text()).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function timeToFirst200(env: Record<string, string>): Promise<{ ms: number; cpuMs: number }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/external/v1/product-costs?month_from=2026-10-01&month_to=2026-10-31`;
  const started = performance.now();
  const proc = Bun.spawn([BINARY], {
    env: { PATH: "/usr/bin:/bin", PRODUCT_COST_API_KEYS: KEY, HOST: "127.0.0.1", PORT: String(port), LOG_LEVEL: "warn", ...env },
    stdout: "ignore",
    stderr: "inherit",
  });
  try {
    for (;;) {
      if (performance.now() - started > 60_000) throw new Error("no 200 within 60 s");
      try {
        const res = await fetch(url, { headers: { authorization: `Bearer ${KEY}` } });
        await res.arrayBuffer();
        if (res.status === 200) {
          const ms = performance.now() - started;
          return { ms, cpuMs: (await cpuSeconds(proc.pid)) * 1000 };
        }
      } catch {
        // not listening yet
      }
      await Bun.sleep(5);
    }
  } finally {
    proc.kill("SIGTERM");
    await proc.exited;
  }
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return { median: s[Math.floor(s.length / 2)]!, min: s[0]!, max: s.at(-1)! };
};

const modes: [string, Record<string, string>][] = [["embedded demo data, in memory (default)", {}]];
const dataDir = join(mkdtempSync(join(tmpdir(), "pce-startup-")), "db");
Bun.spawnSync([BINARY, "migrate", "--data-dir", dataDir], { env: { PATH: "/usr/bin:/bin", LOG_LEVEL: "warn" } });
modes.push(["embedded, warm --data-dir", { DATA_DIR: dataDir }]);
if (process.env.DATABASE_URL) {
  // The endpoint needs the tables: migrate is idempotent and creates only what is missing.
  Bun.spawnSync([BINARY, "migrate"], { env: { PATH: "/usr/bin:/bin", LOG_LEVEL: "warn", DATABASE_URL: process.env.DATABASE_URL } });
  modes.push(["external PostgreSQL (DATABASE_URL)", { DATABASE_URL: process.env.DATABASE_URL }]);
}

// LOAD=N: N busy loops beside the runs, each a core's worth of work (a machine at load N).
const busy = Array.from({ length: Number(process.env.LOAD ?? 0) }, () => Bun.spawn(["sh", "-c", "while :; do :; done"], { stdout: "ignore" }));
await Bun.sleep(busy.length ? 1000 : 0);
const load = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
console.log(`Start to first 200, ${RUNS} runs each, ${new Date().toISOString().slice(0, 10)}, ${busy.length} busy loops beside it, load average ${load}\n`);
console.log("| mode | median | min | max | CPU until then, median |\n|---|---|---|---|---|");
try {
  for (const [name, env] of modes) {
    const runs: { ms: number; cpuMs: number }[] = [];
    for (let i = 0; i < RUNS; i++) runs.push(await timeToFirst200(env));
    const { median, min, max } = stats(runs.map((r) => r.ms));
    const cpu = stats(runs.map((r) => r.cpuMs)).median;
    console.log(`| ${name} | ${median.toFixed(0)} ms | ${min.toFixed(0)} ms | ${max.toFixed(0)} ms | ${cpu.toFixed(0)} ms |`);
  }
} finally {
  for (const b of busy) b.kill("SIGKILL");
  rmSync(dataDir, { recursive: true, force: true });
}
