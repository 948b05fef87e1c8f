// The fixed cost of a request to two builds against each other, on the same database at once:
// answers that hold no row (a range in year 2000, before any data), so what is timed is the
// request's own work (its statements, round trips, transaction), not the rows'. Pairs alternate
// which build goes first; printed: each build's median. Not part of `bun test`:
//
//   bun tests/bench/fixed-cost.ts --a <old executable> --b <new executable> --db pce_bench_50k [--requests 300]

import { startBinary } from "../support/binary.ts";

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const KEY = "fixed-cost-key-0123456789abcdef";
const server = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432";
const env = { DATABASE_URL: `${server}/${option("db", "pce_bench_50k")}`, PRODUCT_COST_API_KEYS: KEY, ANSWER_CACHE_MB: "0" };
const requests = Number(option("requests", "300"));
const builds = { a: await startBinary(option("a"), env), b: await startBinary(option("b"), env) };
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
try {
  console.log(`| request | A, median | B, median |\n|---|---:|---:|`);
  for (const [name, query] of [
    ["an empty day", "month_from=2000-01-10&month_to=2000-01-10"],
    ["an empty range over several months", "month_from=2000-01-10&month_to=2000-03-05"],
  ] as const) {
    const times = { a: [] as number[], b: [] as number[] };
    for (let i = 0; i < requests; i++) {
      for (const which of i % 2 ? (["a", "b"] as const) : (["b", "a"] as const)) {
        const started = performance.now();
        const res = await fetch(`${builds[which].url}/external/v1/product-costs?${query}`, { headers: { authorization: `Bearer ${KEY}` } });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
        times[which].push(performance.now() - started);
      }
    }
    console.log(`| ${name} | ${median(times.a).toFixed(2)} ms | ${median(times.b).toFixed(2)} ms |`);
  }
} finally {
  await Promise.all([builds.a.stop(), builds.b.stop()]);
}
