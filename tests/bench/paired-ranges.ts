// Two builds of the executable timed against each other on the same database at once, range
// by range (tests/bench/ranges.ts's shapes): the check that a change to the request path makes
// no range slower (issue 45: not by more than 5 %). Timing one build and then the other moved
// medians by up to 2× between runs of the same build (a new database's pages still being set),
// so each pair is one read from each, in turn, the order alternating. Not part of `bun test`:
//
//   bun tests/bench/paired-ranges.ts --a <old executable> --b <new executable> --db pce_bench_50k [--pairs 9] [--edge-cache-mb N]
//
// Both serve the database bench.ts made (dataset.ts), every read a first read (ANSWER_CACHE_MB=0),
// one client, identity encoding; a read is timed from the request to the body's last byte. One
// warm-up read of each range from each build first, then both builds' edge warmers are waited
// for (their /metrics: no range waiting), so that both hold the same edges: without the wait,
// the build read first warmed its edges while the other read (it was idle long enough), and
// the other, never idle for 250 ms between the pairs' reads, read every range by its statement.
// --edge-cache-mb: both builds' EDGE_CACHE_MB (0: every range by its statement). Printed: each
// build's median and the median of the pairs' A ÷ B (min–max): above 1 means B is faster.

import { startBinary } from "../support/binary.ts";
import { RANGES } from "./ranges.ts";

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const KEY = "paired-ranges-key-0123456789";
const server = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432";
const url = `${server}/${option("db", "pce_bench_50k")}`;
const pairs = Number(option("pairs", "9"));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const edgeCacheMb: Record<string, string> = process.argv.includes("--edge-cache-mb") ? { EDGE_CACHE_MB: option("edge-cache-mb") } : {};
const env = { DATABASE_URL: url, PRODUCT_COST_API_KEYS: KEY, ANSWER_CACHE_MB: "0", ...edgeCacheMb };
const builds = { a: await startBinary(option("a"), env), b: await startBinary(option("b"), env) };

async function timed(base: string, from: string, to: string): Promise<number> {
  const started = performance.now();
  const res = await fetch(`${base}/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=all`, { headers: { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" } });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${from}..${to}: ${res.status}`);
  return performance.now() - started;
}

/** Once the build's edge warmer has no range waiting, twice in a row 300 ms apart (a build without one: at once). */
async function warmed(base: string): Promise<void> {
  for (let calm = 0; calm < 2; ) {
    const metrics = await (await fetch(`${base}/metrics`)).text();
    const waiting = Number(/^product_cost_export_edge_cache_ranges_waiting (\d+)$/m.exec(metrics)?.[1] ?? 0);
    calm = waiting === 0 ? calm + 1 : 0;
    await Bun.sleep(300);
  }
}

console.log(`paired ranges: ${option("a")} (A) against ${option("b")} (B), ${url}, ${pairs} pairs, ${JSON.stringify(edgeCacheMb)}, ${new Date().toISOString()}`);
console.log("| range | A, median | B, median | A ÷ B, median of pairs (min–max) |\n|---|---:|---:|---:|");
try {
  for (const range of RANGES) {
    await timed(builds.a.url, range.from, range.to);
    await timed(builds.b.url, range.from, range.to);
    await warmed(builds.a.url);
    await warmed(builds.b.url);
    const a: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? (["a", "b"] as const) : (["b", "a"] as const);
      for (const which of order) (which === "a" ? a : b).push(await timed(builds[which].url, range.from, range.to));
    }
    const ratios = a.map((x, i) => x / b[i]!);
    const r = (x: number) => x.toFixed(2);
    console.log(`| ${range.name} | ${Math.round(median(a))} ms | ${Math.round(median(b))} ms | ${r(median(ratios))} (${r(Math.min(...ratios))}–${r(Math.max(...ratios))}) |`);
  }
} finally {
  await Promise.all([builds.a.stop(), builds.b.stop()]);
}
