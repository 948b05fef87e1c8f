// Issue 43's targets: what rows dated far away cost, against the same data without them, in
// one run on one machine. Two copies of the generated dataset (dataset.ts; 730 days ending
// 2026-10-31): "plain", and "far" with three rows per hundred products dated 9999-12-31,
// 0001-01-01 and `infinity` (sentinels an ETL writes for "open-ended"). On each, alternated
// run by run:
//   - `refresh --rebuild` (what `migrate` runs after its migrations), seconds;
//   - the rollup's size after it (months, partitions included), and its month rows;
//   - a daily write's refresh: 2026-11-01 for every product, then `refresh`, seconds (the day
//     deleted again and refreshed between runs);
//   - every range of ranges.ts's folded phase (its own script, each database in turn).
// Not part of `bun test`:
//
//   bun tests/bench/far-dates.ts [--scale 50k] [--runs 3] [--out file.md] [--skip-ranges]
//
// BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server; the
// executable is dist/product-cost-export.

import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { prepareDataset, psql } from "./dataset.ts";

const ROOT = resolve(import.meta.dir, "../..");
const BINARY = resolve(ROOT, "dist/product-cost-export");
const SERVER = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432";

const args = process.argv.slice(2);
const flag = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1]! : fallback;
};
const scale = flag("scale", "50k");
const runs = Number(flag("runs", "3"));
const out = flag("out", "");
const skipRanges = args.includes("--skip-ranges");
const log = (msg: string) => console.error(`far-dates: ${msg}`);

const base = prepareDataset({ scale, server: SERVER, binary: BINARY, reuse: true, log });
const copies = { plain: `${base.name}_plain`, far: `${base.name}_far` };
for (const name of Object.values(copies)) {
  log(`copying ${base.name} to ${name}`);
  psql(`${SERVER}/postgres`, `drop database if exists ${name} with (force);\ncreate database ${name} template ${base.name};\n`);
}
const url = (name: string) => `${SERVER}/${name}`;
psql(
  url(copies.far),
  `insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
   select product_id, d, 1, 1, 1, 1 from products cross join unnest(array['9999-12-31', '0001-01-01', 'infinity']::date[]) d
   where product_id % 100 = 0;`,
);
const farRows = Number(psql(url(copies.far), "select count(*) from product_daily_costs where cost_date > '2027-01-01' or cost_date < '2000-01-01';").trim());

function timed(name: string, command: string[]): number {
  const started = performance.now();
  const r = Bun.spawnSync([BINARY, ...command], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: url(name) }, stdout: "ignore", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${command.join(" ")} on ${name} failed: ${r.stderr.toString()}`);
  return (performance.now() - started) / 1000;
}

const size = (name: string) =>
  psql(
    url(name),
    `select pg_total_relation_size('product_cost_months') + coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree('product_cost_months') where relid <> 'product_cost_months'::regclass), 0),
            (select count(*) from product_cost_months), (select count(*) from pg_inherits where inhparent = 'product_cost_months'::regclass);`,
  )
    .trim()
    .split("|")
    .map(Number);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
type Figures = { rebuild: number[]; daily: number[]; bytes: number; monthRows: number; partitions: number };
const blank = (): Figures => ({ rebuild: [], daily: [], bytes: 0, monthRows: 0, partitions: 0 });
const results: Record<"plain" | "far", Figures> = { plain: blank(), far: blank() };

for (let run = 0; run < runs; run++) {
  for (const key of run % 2 === 0 ? (["plain", "far"] as const) : (["far", "plain"] as const)) {
    const name = copies[key];
    psql(url(name), "vacuum analyze;");
    results[key].rebuild.push(timed(name, ["refresh", "--rebuild"]));
    const [bytes = 0, monthRows = 0, partitions = 0] = size(name);
    Object.assign(results[key], { bytes, monthRows, partitions });
    psql(url(name), "insert into product_daily_costs select product_id, '2026-11-01', 1.5, 2, null, 3 from products;");
    results[key].daily.push(timed(name, ["refresh"]));
    psql(url(name), "delete from product_daily_costs where cost_date = '2026-11-01';");
    timed(name, ["refresh", "--rebuild"]);
    log(`run ${run + 1}/${runs} ${key}: rebuild ${results[key].rebuild.at(-1)!.toFixed(1)} s, daily write's refresh ${results[key].daily.at(-1)!.toFixed(2)} s`);
  }
}

let ranges = "";
if (!skipRanges) {
  for (const key of ["plain", "far"] as const) {
    log(`ranges on ${copies[key]}`);
    const file = `/tmp/far-dates-ranges-${key}.md`;
    const r = Bun.spawnSync([process.execPath, resolve(ROOT, "tests/bench/ranges.ts"), "--db", copies[key], "--runs", String(runs), "--phases", "folded", "--out", file], {
      stdout: "pipe",
      stderr: "inherit",
      env: process.env,
    });
    if (r.exitCode !== 0) throw new Error(`ranges.ts on ${copies[key]} failed`);
    ranges += `\n### ranges.ts on ${key}\n\n${await Bun.file(file).text()}\n`;
  }
}

const ratio = (far: number, plain: number) => `${((far / plain - 1) * 100).toFixed(1)} %`;
const p = results.plain;
const f = results.far;
const report = `# Far dates at ${scale} products (issue 43), ${new Date().toISOString().slice(0, 10)}

\`bun tests/bench/far-dates.ts --scale ${scale} --runs ${runs}\`: the dataset (${base.meta.daily_rows} daily rows) and the
same plus ${farRows} rows dated 9999-12-31, 0001-01-01 and \`infinity\` (one of each per hundred products). Medians of
${runs} runs, the two databases alternated.

| | plain | far dates | difference |
|---|---|---|---|
| \`refresh --rebuild\` (s) | ${median(p.rebuild).toFixed(1)} | ${median(f.rebuild).toFixed(1)} | ${ratio(median(f.rebuild), median(p.rebuild))} |
| a daily write's refresh (s) | ${median(p.daily).toFixed(2)} | ${median(f.daily).toFixed(2)} | ${ratio(median(f.daily), median(p.daily))} |
| the months' size (MB) | ${(p.bytes / 2 ** 20).toFixed(1)} | ${(f.bytes / 2 ** 20).toFixed(1)} | ${ratio(f.bytes, p.bytes)} |
| month rows | ${p.monthRows} | ${f.monthRows} | ${ratio(f.monthRows, p.monthRows)} |
| partitions | ${p.partitions} | ${f.partitions} | |

Every run: ${JSON.stringify(results)}
${ranges}`;
if (out) writeFileSync(out, report);
console.log(report);
