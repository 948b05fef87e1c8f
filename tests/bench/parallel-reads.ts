// Issue 32: do the service's first reads leave PostgreSQL's parallel workers unused, and what
// would using them gain? Not part of `bun test`. On a database bench.ts made (migrated):
//
//   bun tests/bench/parallel-reads.ts [--db pce_bench_50k] [--runs 5] [--out file.md]
//
// Four measurements, every one from this process through postgres.js with the serving
// sessions' settings (SERVING_SETTINGS), the statement the service runs for each range
// (productCostsStatement) and segment=normal:
//   1. plans: EXPLAIN (ANALYZE, FORMAT JSON) of the service's statement and of the naive
//      GROUP BY (tests/db/naive_product_costs.sql), executed whole: whether a Gather is in the
//      plan, whether it ran (rows came through it) and the workers launched. The naive query
//      runs with the serving settings here; ranges.ts runs it at PostgreSQL's defaults, where
//      month to date gets a Gather too (one day and the last 7 days none either way);
//   2. the statement through a cursor of 2,000 rows (a row-limited Execute, as the service
//      reads: PostgreSQL never runs a parallel plan for it) against the same statement
//      executed whole (`await …raw()`) and through forEach, alternated, median of `runs`;
//   3. the same, cursor against whole, while a note of everything waits (after a TRUNCATE or
//      `migrate`, until the refresh: the statement adds up the range's daily rows), inside a
//      transaction that is rolled back: the database is left as it was;
//   4. the ceiling of a parallel plan for the rollup's part: a reduced statement (the two
//      month rows of each product, joined with the products and sorted; no change log, no
//      by-day branch) with parallel workers off, and with them costed cheap enough that the
//      planner uses them, executed whole; against the service's statement through its cursor.
// BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server.

import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import postgres from "postgres";
import naive from "../db/naive_product_costs.sql" with { type: "text" };
import { SERVING_SETTINGS } from "../../src/database/client.ts";
import { productCostsStatement } from "../../src/reads/product-costs.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const server = (process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432").replace(/\/+$/, "");
const db = option("db", "pce_bench_50k");
const runs = Number(option("runs", "5"));
const sql = postgres(`${server}/${db}`, { max: 1, onnotice: () => {}, connection: { ...SERVING_SETTINGS } });
const SEGMENT = "normal";
const BATCH = 2000; // the service's batch size (src/service/app.ts)

// The ranges of tests/bench/ranges.ts (the data ends 2026-10-31), and two short ones the
// statement adds up from their daily rows.
const RANGES: [name: string, from: string, to: string][] = [
  ["one day", "2026-10-15", "2026-10-15"],
  ["two days", "2026-10-14", "2026-10-15"],
  ["four days across a month's end", "2026-09-29", "2026-10-02"],
  ["last 7 days", "2026-10-25", "2026-10-31"],
  ["month to date (1st to 24th)", "2026-10-01", "2026-10-24"],
  ["last 30 days", "2026-10-02", "2026-10-31"],
  ["mid-month to mid-month", "2026-09-15", "2026-10-14"],
  ["last 90 days", "2026-08-03", "2026-10-31"],
  ["year to date", "2026-01-01", "2026-10-24"],
  ["rolling 12 months", "2025-10-25", "2026-10-24"],
  ["two whole months", "2026-08-01", "2026-09-30"],
  ["a calendar month (as rows, not rendered)", "2026-09-01", "2026-09-30"],
  ["two years", "2024-11-01", "2026-10-31"],
];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(1)) + " ms";
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const lines: string[] = [];
const p = (s = "") => (lines.push(s), console.error(s));

type Tx = postgres.Sql<{}> | postgres.TransactionSql<{}>;
const cursor = async (tx: Tx, text: string, params: unknown[]) => {
  let n = 0;
  await tx.unsafe(text, params as string[]).raw().cursor(BATCH, (rows) => void (n += rows.length));
  return n;
};
const whole = async (tx: Tx, text: string, params: unknown[]) => (await tx.unsafe(text, params as string[]).raw()).length;
const forEach = async (tx: Tx, text: string, params: unknown[]) => {
  let n = 0;
  await tx.unsafe(text, params as string[]).raw().forEach(() => void n++);
  return n;
};

/** Median ms of each way, the ways alternated run by run (the order reversed every other run). */
async function alternated(ways: Record<string, () => Promise<number>>): Promise<{ med: Record<string, number>; all: Record<string, number[]>; rows: number }> {
  const names = Object.keys(ways);
  const all: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
  let rows = -1;
  for (let i = 0; i < runs; i++) {
    for (const name of i % 2 ? [...names].reverse() : names) {
      const start = performance.now();
      const n = await ways[name]!();
      all[name]!.push(performance.now() - start);
      if (rows >= 0 && n !== rows) throw new Error(`${name}: ${n} rows, another way ${rows}`);
      rows = n;
    }
  }
  return { med: Object.fromEntries(names.map((n) => [n, median(all[n]!)])), all, rows };
}

interface PlanNode {
  "Node Type": string;
  "Actual Rows"?: number;
  "Actual Loops"?: number;
  "Workers Launched"?: number;
  Plans?: PlanNode[];
}
function gathers(node: PlanNode, out: PlanNode[] = []): PlanNode[] {
  if (node["Node Type"] === "Gather" || node["Node Type"] === "Gather Merge") out.push(node);
  node.Plans?.forEach((c) => gathers(c, out));
  return out;
}
async function plan(text: string, params: unknown[]): Promise<{ ms: number; summary: string }> {
  const [row] = await sql.unsafe(`explain (analyze, format json) ${text}`, params as string[]);
  const top = (row!["QUERY PLAN"] as { Plan: PlanNode; "Execution Time": number }[])[0]!;
  const gs = gathers(top.Plan);
  const summary = gs.length
    ? gs.map((g) => `${g["Node Type"]}: ${g["Workers Launched"] ?? 0} workers, ${(g["Actual Rows"] ?? 0) > 0 ? "ran" : "no rows through it"}`).join("; ")
    : "no Gather";
  return { ms: top["Execution Time"], summary };
}

const naiveText = naive.replace(/^\s*--.*$/gm, "").trim();
const statement = (from: string, to: string) => productCostsStatement({ monthFrom: from, monthTo: to, segment: SEGMENT });
await sql`select 1`;
const version = (await sql`select version()`)[0]!.version as string;
p(`## First reads and PostgreSQL's parallel workers, ${new Date().toISOString().slice(0, 10)}, \`${db}\``);
p();
p(`- Command: \`bun tests/bench/parallel-reads.ts ${argv.join(" ")}\``);
p(`- ${version.split(",")[0]}; serving settings ${JSON.stringify(SERVING_SETTINGS)}; the server's parallel settings as configured (max_parallel_workers_per_gather ${(await sql`show max_parallel_workers_per_gather`)[0]!.max_parallel_workers_per_gather})`);
p(`- Load average at the start: ${load()}`);
p();

p("### 1. Plans, executed whole (EXPLAIN ANALYZE)");
p();
p("| range | service's statement | its Gather nodes | naive GROUP BY | its Gather nodes |");
p("|---|---:|---|---:|---|");
for (const [name, from, to] of RANGES) {
  const st = statement(from, to);
  const s = await plan(st.text, st.params);
  const n = await plan(naiveText, [from, to, SEGMENT]);
  p(`| ${name} | ${ms(s.ms)} | ${s.summary} | ${ms(n.ms)} | ${n.summary} |`);
}
p();
p(`Load average after: ${load()}`);
p();

p(`### 2. Through the cursor (${BATCH} rows an Execute) or whole, median of ${runs}, alternated`);
p();
p("| range | rows | cursor | whole (`await raw()`) | forEach | whole ÷ cursor |");
p("|---|---:|---:|---:|---:|---:|");
for (const [name, from, to] of RANGES) {
  const st = statement(from, to);
  const r = await alternated({
    cursor: () => cursor(sql, st.text, st.params),
    whole: () => whole(sql, st.text, st.params),
    forEach: () => forEach(sql, st.text, st.params),
  });
  p(`| ${name} | ${r.rows.toLocaleString("en")} | ${ms(r.med.cursor!)} | ${ms(r.med.whole!)} | ${ms(r.med.forEach!)} | ${(r.med.whole! / r.med.cursor!).toFixed(2)} |`);
}
p();
p(`Load average after: ${load()}`);
p();

p(`### 3. While a note of everything waits (daily rows added up), cursor or whole, median of ${runs}, alternated`);
p();
p("| range | cursor | whole | whole ÷ cursor | each run: cursor / whole |");
p("|---|---:|---:|---:|---|");
await sql
  .begin(async (tx) => {
    await tx`insert into product_cost_deltas (product_id, month) values (null, null)`;
    for (const [name, from, to] of RANGES.filter(([n]) => ["last 7 days", "last 30 days", "last 90 days", "year to date", "two years"].includes(n))) {
      const st = statement(from, to);
      const r = await alternated({ cursor: () => cursor(tx, st.text, st.params), whole: () => whole(tx, st.text, st.params) });
      const each = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(", ");
      p(`| ${name} | ${ms(r.med.cursor!)} | ${ms(r.med.whole!)} | ${(r.med.whole! / r.med.cursor!).toFixed(2)} | ${each(r.all.cursor!)} / ${each(r.all.whole!)} |`);
    }
    throw new Error("roll back");
  })
  .catch((err: Error) => {
    if (err.message !== "roll back") throw err;
  });
p();
p(`Load average after: ${load()}`);
p();

// The reduced statement: the totals through $2's month (mask $3) less those before $1's
// (mask $4), both from product_cost_months, as sql/queries/product_costs.sql computes them.
const edge = (mask: string, month: string) => `
  select m.product_id, m.rows_before + k as n,
    m.purchase_cost_usd_before + coalesce(m.purchase_cost_usd[k], 0) as pc, m.purchase_cost_usd_count_before + bit_count((m.purchase_cost_usd_days & ${mask})::bit(32)) as pcn,
    m.inbound_freight_usd_before + coalesce(m.inbound_freight_usd[k], 0) as fr, m.inbound_freight_usd_count_before + bit_count((m.inbound_freight_usd_days & ${mask})::bit(32)) as frn,
    m.shipping_to_customer_usd_before + coalesce(m.shipping_to_customer_usd[k], 0) as sh, m.shipping_to_customer_usd_count_before + bit_count((m.shipping_to_customer_usd_days & ${mask})::bit(32)) as shn,
    m.warehouse_fees_usd_before + coalesce(m.warehouse_fees_usd[k], 0) as wf, m.warehouse_fees_usd_count_before + bit_count((m.warehouse_fees_usd_days & ${mask})::bit(32)) as wfn
  from product_cost_months m cross join lateral (select bit_count((m.days & ${mask})::bit(32))::int as k) kk
  where m.month = ${month}`;
const reduced = `
with t as (${edge("$3::int", "$2::date")}), f as (${edge("$4::int", "$1::date")}),
s as (
  select t.product_id, t.n - coalesce(f.n, 0) as n,
    t.pc - coalesce(f.pc, 0) as pc, t.pcn - coalesce(f.pcn, 0) as pcn, t.fr - coalesce(f.fr, 0) as fr, t.frn - coalesce(f.frn, 0) as frn,
    t.sh - coalesce(f.sh, 0) as sh, t.shn - coalesce(f.shn, 0) as shn, t.wf - coalesce(f.wf, 0) as wf, t.wfn - coalesce(f.wfn, 0) as wfn
  from t left join f on f.product_id = t.product_id
)
select p.erp_product_id, p.erp_sku, p.product_name,
  trim_scale(case when s.pcn > 0 then s.pc end), trim_scale(case when s.frn > 0 then s.fr end),
  trim_scale(case when s.shn > 0 then s.sh end), trim_scale(case when s.wfn > 0 then s.wf end)
from s join products p on p.product_id = s.product_id
where s.n > 0 and not p.is_sample
order by p.erp_sku collate "C" nulls last, p.erp_product_id, p.product_id`;
const bits = (days: number) => String(2 ** days - 1); // days 1..n of a month
const REDUCED: [name: string, from: string, to: string, fromMonth: string, toMonth: string, through: string, before: string][] = [
  ["mid-month to mid-month", "2026-09-15", "2026-10-14", "2026-09-01", "2026-10-01", bits(14), bits(14)],
  ["year to date", "2026-01-01", "2026-10-24", "2026-01-01", "2026-10-01", bits(24), "0"],
  ["two years", "2024-11-01", "2026-10-31", "2024-11-01", "2026-10-01", String(2 ** 31 - 1), "0"],
];
p(`### 4. The ceiling of a parallel plan for the rollup's part, median of ${runs}, alternated`);
p();
p("| range | service's statement, cursor | reduced statement, serial, whole | reduced, parallel, whole | parallel ÷ serial | its plan |");
p("|---|---:|---:|---:|---:|---|");
const PARALLEL = "set parallel_setup_cost = 0; set parallel_tuple_cost = 0.01";
for (const [name, from, to, fm, tm, through, before] of REDUCED) {
  const st = statement(from, to);
  const params = [fm, tm, through, before];
  await sql.unsafe(PARALLEL).simple();
  const parallelPlan = await plan(reduced, params);
  await sql`reset all`.simple();
  const r = await alternated({
    service: () => cursor(sql, st.text, st.params),
    serial: async () => {
      await sql`set max_parallel_workers_per_gather = 0`;
      try {
        return await whole(sql, reduced, params);
      } finally {
        await sql`reset all`.simple();
      }
    },
    parallel: async () => {
      await sql.unsafe(PARALLEL).simple();
      try {
        return await whole(sql, reduced, params);
      } finally {
        await sql`reset all`.simple();
      }
    },
  });
  p(`| ${name} | ${ms(r.med.service!)} | ${ms(r.med.serial!)} | ${ms(r.med.parallel!)} | ${(r.med.parallel! / r.med.serial!).toFixed(2)} | ${parallelPlan.summary} |`);
}
p();
p(`Load average at the end: ${load()}`);
await sql.end();

const out = option("out", "");
if (out) writeFileSync(resolve(out), lines.join("\n") + "\n");
process.stdout.write(lines.join("\n") + "\n");
