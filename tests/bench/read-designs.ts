// Issue 53's design step: what a computed range costs under each candidate layout, measured
// before any is built, on the benchmarks' generated database (bench.ts, dataset.ts), so that
// the design is chosen by its figures. Not part of `bun test`; it changes nothing of the
// service's: the candidates' tables live in a schema of their own (`read_designs`), made
// from the rollup as it stands and dropped at the end.
//
//   bun tests/bench/read-designs.ts --db pce_bench_50k [--runs 5] [--out file.md]
//
// For the ranges of ranges.ts (the same edges), one client, a quiet machine:
//   today      the service's statement (sql/queries/product_costs.sql), server time (psql);
//   rendered   the rendered month's chunks (the bytes' own cost: the yardstick);
//   narrow     the months as int8 micro-units, each day's running sum at its calendar day
//              (fixed-width arrays: an element is an offset, not a walk), the catalogue's
//              position in each row, both edges subtracted in SQL, no join, no sort: server
//              time, and in Bun through postgres.js with the JSON written from a catalogue the
//              service would hold (the order precomputed, each product's fields encoded once);
//   befores    a month-aligned edge from a table of the totals before each month alone;
//   in memory  both edges' vectors already held by the service: arithmetic and encoding only.

import postgres from "postgres";
import { writeFileSync } from "node:fs";
import { RANGES, median, ms, SEGMENT, type Range } from "./ranges.ts";
import { psql } from "./dataset.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1]! : fallback;
};
const SERVER = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432";
const DB = option("db", "pce_bench_50k");
const RUNS = Number(option("runs", "5"));
const OUT = option("out", "");
const URL_ = `${SERVER}/${DB}`;
const SERVING = "set work_mem = '16MB'; set random_page_cost = 1.1; set plan_cache_mode = force_custom_plan; set jit = off; set max_parallel_workers_per_gather = 0;";

const log = (m: string) => console.error(`${new Date().toISOString()} ${m}`);
const monthOf = (day: string) => day.slice(0, 8) + "01";
const dayOf = (day: string) => Number(day.slice(8, 10));
const dayBefore = (day: string) => new Date(Date.parse(day + "T00:00:00Z") - 86_400_000).toISOString().slice(0, 10);
const isMonthEnd = (day: string) => dayOf(new Date(Date.parse(day + "T00:00:00Z") + 86_400_000).toISOString().slice(0, 10)) === 1;

/** The candidates' tables: per month a table of int8 rows in catalogue order, and the befores alone. */
function build(months: string[]): void {
  const t = performance.now();
  psql(
    URL_,
    `drop schema if exists read_designs cascade; create schema read_designs;
     create table read_designs.catalogue as
       select row_number() over (order by erp_sku collate "C" nulls last, erp_product_id, product_id)::int - 1 as ordinal, product_id
       from products;
     create unique index on read_designs.catalogue (product_id);`,
  );
  for (const month of months) {
    const name = `m_${month.slice(0, 7).replace("-", "_")}`;
    // Calendar day j's running sum: the k-th of the rollup's sums, k the days with a row through j.
    const cum = (col: string) =>
      `array(select (coalesce(m.${col}[bit_count((m.days & ((1::bigint << j) - 1)::int)::bit(32))::int], 0) * 1000000)::int8 from generate_series(1, 31) j)`;
    psql(
      URL_,
      `create table read_designs.${name} as
       select c.ordinal, m.rows_before, (m.purchase_cost_usd_before * 1000000)::int8 as pc_before, m.purchase_cost_usd_count_before as pcn_before,
         (m.inbound_freight_usd_before * 1000000)::int8 as fr_before, m.inbound_freight_usd_count_before as frn_before,
         (m.shipping_to_customer_usd_before * 1000000)::int8 as sh_before, m.shipping_to_customer_usd_count_before as shn_before,
         (m.warehouse_fees_usd_before * 1000000)::int8 as wf_before, m.warehouse_fees_usd_count_before as wfn_before,
         m.days, m.purchase_cost_usd_days as pc_days, m.inbound_freight_usd_days as fr_days, m.shipping_to_customer_usd_days as sh_days, m.warehouse_fees_usd_days as wf_days,
         ${cum("purchase_cost_usd")} as pc, ${cum("inbound_freight_usd")} as fr, ${cum("shipping_to_customer_usd")} as sh, ${cum("warehouse_fees_usd")} as wf
       from product_cost_months m join read_designs.catalogue c using (product_id)
       where m.month = '${month}' order by c.ordinal;
       create table read_designs.b_${name.slice(2)} as
         select ordinal, rows_before, pc_before, pcn_before, fr_before, frn_before, sh_before, shn_before, wf_before, wfn_before from read_designs.${name} order by ordinal;
       vacuum analyze read_designs.${name}; vacuum analyze read_designs.b_${name.slice(2)};`,
    );
  }
  log(`built the candidates' tables for ${months.length} months in ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

const mask = (days: number) => (days >= 31 ? -1 : (1 << days) - 1) | 0; // bits of days 1..days

/** One edge's totals through `day` (null: before the months: nothing). */
function edgeSql(day: string | null, alias: string): string {
  if (day === null) return "";
  const name = `read_designs.m_${day.slice(0, 7).replace("-", "_")}`;
  const d = dayOf(day);
  const m = mask(d);
  const pop = (col: string) => `bit_count((${col} & ${m})::bit(32))`;
  return `${alias} as (select ordinal, rows_before + ${pop("days")} as n, pc_before + pc[${d}] as pc, pcn_before + ${pop("pc_days")} as pcn,
    fr_before + fr[${d}] as fr, frn_before + ${pop("fr_days")} as frn, sh_before + sh[${d}] as sh, shn_before + ${pop("sh_days")} as shn,
    wf_before + wf[${d}] as wf, wfn_before + ${pop("wf_days")} as wfn from ${name} offset 0)`; // OFFSET 0: computed before the join, which then hashes narrow rows
}

/** The narrow candidate's statement for a range: per product its totals (micro-units), by catalogue position. */
function narrowSql(range: Range): string {
  const before = dayBefore(range.from);
  const from = before < "2024-11-01" ? null : before;
  const t = edgeSql(range.to, "t");
  if (from === null) return `with ${t} select ordinal, n, pc, pcn, fr, frn, sh, shn, wf, wfn from t where n > 0`;
  if (monthOf(range.from) === monthOf(range.to)) {
    // Both edges in one row (the day before a month's first: its befores, day 0).
    const name = `read_designs.m_${range.to.slice(0, 7).replace("-", "_")}`;
    const a = monthOf(from) === monthOf(range.to) ? dayOf(from) : 0;
    const b = dayOf(range.to);
    const r = mask(b) & ~mask(a);
    const pop = (col: string) => `bit_count((${col} & ${r})::bit(32))`;
    return `select ordinal, ${pop("days")} as n, pc[${b}] - coalesce(pc[${a}], 0) as pc, ${pop("pc_days")} as pcn, fr[${b}] - coalesce(fr[${a}], 0) as fr, ${pop("fr_days")} as frn,
      sh[${b}] - coalesce(sh[${a}], 0) as sh, ${pop("sh_days")} as shn, wf[${b}] - coalesce(wf[${a}], 0) as wf, ${pop("wf_days")} as wfn from ${name} where days & ${r} <> 0`;
  }
  return `with ${t}, ${edgeSql(from, "f")}
    select t.ordinal, t.n - coalesce(f.n, 0) as n, t.pc - coalesce(f.pc, 0) as pc, t.pcn - coalesce(f.pcn, 0) as pcn, t.fr - coalesce(f.fr, 0) as fr, t.frn - coalesce(f.frn, 0) as frn,
      t.sh - coalesce(f.sh, 0) as sh, t.shn - coalesce(f.shn, 0) as shn, t.wf - coalesce(f.wf, 0) as wf, t.wfn - coalesce(f.wfn, 0) as wfn
    from t left join f using (ordinal) where t.n - coalesce(f.n, 0) > 0`;
}

/** psql's server-side times of `statement` run `runs` times (output discarded). */
function psqlTimes(statement: string, runs: number, prepare = ""): number[] {
  const script = `${SERVING}\n${prepare}\n\\o /dev/null\n\\timing on\n` + Array.from({ length: runs }, () => `${statement};`).join("\n") + "\n";
  return [...psql(URL_, script).matchAll(/Time: ([0-9.]+) ms/g)].map((m) => Number(m[1]));
}

// ---- The catalogue a service would hold, and the JSON it writes from micro-units ----

const encoder = new TextEncoder();
interface Catalogue {
  heads: Uint8Array[]; // {"erp_product_id":…,"erp_sku":"…","product_name":"…",
  sample: Uint8Array; // 1: is_sample
}

async function loadCatalogue(sql: postgres.Sql): Promise<Catalogue> {
  const rows = await sql.unsafe<{ erp_product_id: string | null; erp_sku: string | null; product_name: string | null; is_sample: boolean }[]>(
    `select p.erp_product_id::text, p.erp_sku, p.product_name, p.is_sample from read_designs.catalogue c join products p using (product_id) order by c.ordinal`,
  );
  const heads = rows.map((r) =>
    encoder.encode(`{"erp_product_id":${r.erp_product_id ?? "null"},"erp_sku":${JSON.stringify(r.erp_sku)},"product_name":${JSON.stringify(r.product_name)},`),
  );
  return { heads, sample: Uint8Array.from(rows, (r) => (r.is_sample ? 1 : 0)) };
}

const FIELDS = ['"purchase_cost_usd":', ',"inbound_freight_usd":', ',"shipping_to_customer_usd":', ',"warehouse_fees_usd":'].map((f) => encoder.encode(f));
const NULL = encoder.encode("null");

/** Exact decimal text of `micro` micro-units (an integer, |micro| < 2^53), trailing zeros dropped, into out at o. */
function writeMicro(out: Uint8Array, o: number, micro: number): number {
  if (micro < 0) {
    out[o++] = 0x2d;
    micro = -micro;
  }
  const whole = Math.floor(micro / 1e6);
  let frac = micro - whole * 1e6;
  const s = String(whole);
  for (let i = 0; i < s.length; i++) out[o++] = s.charCodeAt(i);
  if (frac !== 0) {
    out[o++] = 0x2e;
    let digits = 6;
    while (frac % 10 === 0) {
      frac /= 10;
      digits--;
    }
    const f = String(frac).padStart(digits, "0");
    for (let i = 0; i < f.length; i++) out[o++] = f.charCodeAt(i);
  }
  return o;
}

interface Vectors {
  n: Int32Array;
  sums: Float64Array[]; // 4 columns, micro-units
  counts: Int32Array[];
}

const newVectors = (size: number): Vectors => ({ n: new Int32Array(size), sums: [0, 1, 2, 3].map(() => new Float64Array(size)), counts: [0, 1, 2, 3].map(() => new Int32Array(size)) });

/** The JSON array of the range held in `v` (by catalogue position), for `segment`. */
function writeJson(cat: Catalogue, v: Vectors, segment: string): Uint8Array {
  let size = 2;
  for (let i = 0; i < cat.heads.length; i++) if (v.n[i]! > 0) size += cat.heads[i]!.length + 4 * 40 + 120;
  const out = new Uint8Array(size);
  let o = 0;
  out[o++] = 0x5b;
  let first = true;
  const want = segment === "all" ? -1 : segment === "sample" ? 1 : 0;
  for (let i = 0; i < cat.heads.length; i++) {
    if (v.n[i]! <= 0 || (want >= 0 && cat.sample[i] !== want)) continue;
    if (!first) out[o++] = 0x2c;
    first = false;
    out.set(cat.heads[i]!, o);
    o += cat.heads[i]!.length;
    for (let c = 0; c < 4; c++) {
      out.set(FIELDS[c]!, o);
      o += FIELDS[c]!.length;
      if (v.counts[c]![i]! > 0) o = writeMicro(out, o, v.sums[c]![i]!);
      else {
        out.set(NULL, o);
        o += 4;
      }
    }
    out[o++] = 0x7d;
  }
  out[o++] = 0x5d;
  return out.subarray(0, o);
}

/** An ASCII integer cell (optionally negative) as a number. */
function int(cell: Uint8Array): number {
  let i = 0;
  let neg = false;
  if (cell[0] === 0x2d) {
    neg = true;
    i = 1;
  }
  let x = 0;
  for (; i < cell.length; i++) x = x * 10 + (cell[i]! - 48);
  return neg ? -x : x;
}

/** Rows of (position, n, pc, pcn, fr, frn, sh, shn, wf, wfn), as ASCII integer cells, into `v` by position. */
function place(rows: Uint8Array[][], v: Vectors): void {
  for (const r of rows) {
    const i = int(r[0]!);
    v.n[i] = int(r[1]!);
    for (let c = 0; c < 4; c++) {
      v.sums[c]![i] = int(r[2 + 2 * c]!);
      v.counts[c]![i] = int(r[3 + 2 * c]!);
    }
  }
}

/** The narrow candidate end to end in Bun: the rows through postgres.js, placed by position, written as JSON. */
async function narrowInBun(sql: postgres.Sql, cat: Catalogue, range: Range): Promise<{ ms: number; bytes: number }> {
  const t = performance.now();
  const v = newVectors(cat.heads.length);
  const rows = (await sql.unsafe(narrowSql(range)).raw()) as unknown as Uint8Array[][];
  place(rows, v);
  const body = writeJson(cat, v, SEGMENT);
  return { ms: performance.now() - t, bytes: body.length };
}

/** Two edges held in memory: the difference and the JSON only. */
function inMemory(cat: Catalogue, to: Vectors, from: Vectors): { ms: number; bytes: number } {
  const t = performance.now();
  const size = cat.heads.length;
  const v = newVectors(size);
  for (let i = 0; i < size; i++) {
    v.n[i] = to.n[i]! - from.n[i]!;
    for (let c = 0; c < 4; c++) {
      v.sums[c]![i] = to.sums[c]![i]! - from.sums[c]![i]!;
      v.counts[c]![i] = to.counts[c]![i]! - from.counts[c]![i]!;
    }
  }
  const body = writeJson(cat, v, SEGMENT);
  return { ms: performance.now() - t, bytes: body.length };
}

async function edgeVectors(sql: postgres.Sql, size: number, day: string): Promise<Vectors> {
  const v = newVectors(size);
  const rows = (await sql.unsafe(`with ${edgeSql(day, "e")} select * from e`).raw()) as unknown as Uint8Array[][];
  place(rows, v);
  return v;
}

// ---- One edge read into vectors: one row of arrays (no cell per value), parsed in place ----

/** The integers of a PostgreSQL array's text ({1,-2,3}), or of numeric text scaled to micro-units, in order. */
function parseArray(cell: Uint8Array, micro: boolean, out: Float64Array): number {
  let k = 0;
  let x = 0;
  let neg = false;
  let frac = -1; // digits after the point (-1: none yet)
  for (let i = 1; i < cell.length; i++) {
    const b = cell[i]!;
    if (b >= 48 && b <= 57) {
      x = x * 10 + (b - 48);
      if (frac >= 0) frac++;
    } else if (b === 0x2d) neg = true;
    else if (b === 0x2e) frac = 0;
    else if (b === 0x2c || b === 0x7d) {
      if (micro) for (let f = Math.max(frac, 0); f < 6; f++) x *= 10;
      out[k++] = neg ? -x : x;
      x = 0;
      neg = false;
      frac = -1;
    }
  }
  return k;
}

type EdgeSource = "rollup today" | "narrow months" | "befores";

/** The statement of one edge's vectors from `source`, as one row of arrays. */
function edgeArraysSql(day: string, source: EdgeSource): string {
  const d = dayOf(day);
  const m = mask(d);
  const pop = (col: string) => `bit_count((${col} & ${m})::bit(32))`;
  const name = day.slice(0, 7).replace("-", "_");
  let inner: string;
  if (source === "befores") {
    // The totals before the next month (a month end): that month's befores alone.
    const next = new Date(Date.parse(day + "T00:00:00Z") + 86_400_000).toISOString().slice(0, 7).replace("-", "_");
    inner = `select ordinal, rows_before as n, pc_before as pc, pcn_before as pcn, fr_before as fr, frn_before as frn, sh_before as sh, shn_before as shn, wf_before as wf, wfn_before as wfn from read_designs.b_${next}`;
  } else if (source === "narrow months") {
    inner = edgeSql(day, "e").replace(/^e as \(/, "").replace(/\)$/, "");
  } else {
    const k = `bit_count((m.days & ${m})::bit(32))::int`;
    inner = `select c.ordinal, m.rows_before + ${k} as n, m.purchase_cost_usd_before + coalesce(m.purchase_cost_usd[${k}], 0) as pc, m.purchase_cost_usd_count_before + ${pop("m.purchase_cost_usd_days")} as pcn,
      m.inbound_freight_usd_before + coalesce(m.inbound_freight_usd[${k}], 0) as fr, m.inbound_freight_usd_count_before + ${pop("m.inbound_freight_usd_days")} as frn,
      m.shipping_to_customer_usd_before + coalesce(m.shipping_to_customer_usd[${k}], 0) as sh, m.shipping_to_customer_usd_count_before + ${pop("m.shipping_to_customer_usd_days")} as shn,
      m.warehouse_fees_usd_before + coalesce(m.warehouse_fees_usd[${k}], 0) as wf, m.warehouse_fees_usd_count_before + ${pop("m.warehouse_fees_usd_days")} as wfn
      from product_cost_months m join read_designs.catalogue c using (product_id) where m.month = '${monthOf(day)}'`;
  }
  return `select array_agg(ordinal) o, array_agg(n) n, array_agg(pc) pc, array_agg(pcn) pcn, array_agg(fr) fr, array_agg(frn) frn, array_agg(sh) sh, array_agg(shn) shn, array_agg(wf) wf, array_agg(wfn) wfn from (${inner}${inner.endsWith("offset 0") ? "" : " offset 0"}) e`;
}

/** One edge read from `source` into vectors by catalogue position, in Bun: its time. */
async function edgeRead(sql: postgres.Sql, size: number, day: string, source: EdgeSource): Promise<{ ms: number; v: Vectors }> {
  const t = performance.now();
  const [row] = (await sql.unsafe(edgeArraysSql(day, source)).raw()) as unknown as Uint8Array[][];
  const scratch = new Float64Array(size);
  const ordinals = new Float64Array(size);
  const k = parseArray(row![0]!, false, ordinals);
  const v = newVectors(size);
  const place = (cell: Uint8Array, micro: boolean, into: Float64Array | Int32Array) => {
    parseArray(cell, micro, scratch);
    for (let j = 0; j < k; j++) into[ordinals[j]!] = scratch[j]!;
  };
  place(row![1]!, false, v.n);
  for (let c = 0; c < 4; c++) {
    place(row![2 + 2 * c]!, source === "rollup today", v.sums[c]!);
    place(row![3 + 2 * c]!, false, v.counts[c]!);
  }
  return { ms: performance.now() - t, v };
}

/**
 * One edge read by COPY ... TO STDOUT (FORMAT binary): each value in its binary form (no text
 * made by the server nor parsed here). The edge's rows as the narrow statement gives them.
 */
async function edgeByCopy(size: number, day: string, source: EdgeSource): Promise<{ ms: number; v: Vectors }> {
  // A connection of its own, opened before the clock starts: postgres.js 3.4.9 never gives a
  // connection back after a COPY TO STDOUT (the next query on it waits for ever: seen here).
  const own = postgres(URL_, { max: 1, onnotice: () => {}, connection: { work_mem: "16MB", jit: "off", max_parallel_workers_per_gather: "0" } });
  await own.unsafe("select 1");
  const t = performance.now();
  const inner = edgeArraysSql(day, source).replace(/^select array_agg[^]*? from \((.*)\) e$/s, "$1");
  const stream = await own.unsafe(`copy (${inner}) to stdout (format binary)`).readable();
  const chunks: Uint8Array[] = [];
  for await (const chunk of stream) chunks.push(chunk as Uint8Array);
  const data = Buffer.concat(chunks);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const v = newVectors(size);
  let o = 19; // signature, flags, header extension
  for (;;) {
    const fields = view.getInt16(o);
    o += 2;
    if (fields === -1) break;
    const value = (): number => {
      const len = view.getInt32(o);
      o += 4;
      const x = len === 8 ? Number(view.getBigInt64(o)) : view.getInt32(o);
      o += len;
      return x;
    };
    const i = value();
    v.n[i] = value();
    for (let c = 0; c < 4; c++) {
      v.sums[c]![i] = value();
      v.counts[c]![i] = value();
    }
  }
  const elapsed = performance.now() - t;
  await own.end({ timeout: 0 });
  return { ms: elapsed, v };
}

// ---- The run ----

const computed = RANGES.filter((r) => !r.name.includes("rendered"));
const months = [...new Set(computed.flatMap((r) => [monthOf(r.to), monthOf(dayBefore(r.from))]).filter((m) => m >= "2024-11-01"))].sort();
build(months);
const sql = postgres(URL_, { max: 1, onnotice: () => {}, connection: { work_mem: "16MB", jit: "off", max_parallel_workers_per_gather: "0" } });
const cat = await loadCatalogue(sql);
const productCosts = await Bun.file(new URL("../../sql/queries/product_costs.sql", import.meta.url)).text();
const rendered = await Bun.file(new URL("../../sql/queries/product_costs_rendered.sql", import.meta.url)).text();

const lines: string[] = [];
const renderedMonth = RANGES.find((r) => r.name.includes("rendered"))!;
const renderedTimes = psqlTimes(`execute r('month', '${renderedMonth.from}', '${SEGMENT}')`, RUNS, `prepare r(text, date, text) as ${rendered.replace(/^\s*--.*$/gm, "")};`);
lines.push(`| ${renderedMonth.name} | ${ms(median(renderedTimes))} | | | | |`);
for (const range of computed) {
  const today = median(psqlTimes(`execute q('${range.from}', '${range.to}', '${SEGMENT}')`, RUNS, `prepare q(date, date, text) as ${productCosts.replace(/^\s*--.*$/gm, "")};`));
  const narrow = median(psqlTimes(narrowSql(range), RUNS));
  const bun: number[] = [];
  let bytes = 0;
  for (let i = 0; i < RUNS; i++) {
    const r = await narrowInBun(sql, cat, range);
    bun.push(r.ms);
    bytes = r.bytes;
  }
  const before = dayBefore(range.from);
  const aligned = isMonthEnd(before) && isMonthEnd(range.to) && before >= "2024-11-01";
  const to = await edgeVectors(sql, cat.heads.length, range.to);
  const from = before >= "2024-11-01" ? await edgeVectors(sql, cat.heads.length, before) : newVectors(cat.heads.length);
  const memory = median(Array.from({ length: RUNS }, () => inMemory(cat, to, from).ms));
  lines.push(`| ${range.name} (${range.from}..${range.to}) | ${ms(today)} | ${ms(narrow)} | ${ms(median(bun))} (${(bytes / 1e6).toFixed(1)} MB) | ${aligned ? "month-aligned" : ""} | ${ms(memory)} |`);
  log(lines.at(-1)!);
}
// One edge of each kind (the latest month's 24th, a month end), read from each source.
const edgeLines: string[] = [];
for (const [day, sources] of [
  ["2026-10-24", ["rollup today", "narrow months"]],
  ["2026-09-30", ["rollup today", "narrow months", "befores"]],
] as [string, EdgeSource[]][]) {
  for (const source of sources) {
    const times: number[] = [];
    for (let i = 0; i < RUNS; i++) times.push((await edgeRead(sql, cat.heads.length, day, source)).ms);
    const server = median(psqlTimes(edgeArraysSql(day, source), RUNS));
    const copied: number[] = [];
    if (source !== "rollup today") for (let i = 0; i < RUNS; i++) copied.push((await edgeByCopy(cat.heads.length, day, source)).ms);
    edgeLines.push(`| ${day} | ${source} | ${ms(server)} | ${ms(median(times))} | ${copied.length ? ms(median(copied)) : ""} |`);
    log(edgeLines.at(-1)!);
  }
}
// The edges' vectors agree, whatever the source (the rollup's numeric against the int8 copy).
const a = (await edgeRead(sql, cat.heads.length, "2026-09-30", "rollup today")).v;
const b = (await edgeRead(sql, cat.heads.length, "2026-09-30", "befores")).v;
const c = (await edgeByCopy(cat.heads.length, "2026-09-30", "befores")).v;
for (const other of [b, c]) if (a.n.some((x, i) => x !== other.n[i]) || a.sums.some((col, k) => col.some((x, i) => x !== other.sums[k]![i])) || a.counts.some((col, k) => col.some((x, i) => x !== other.counts[k]![i]))) throw new Error("edge vectors differ between sources");

const sizes = psql(URL_, `select pg_size_pretty(sum(pg_total_relation_size(c.oid))) from pg_class c join pg_namespace n on n.oid = c.relnamespace where n.nspname = 'read_designs' and c.relname like 'm\\_%' and c.relkind = 'r';`).trim();
const rollupSize = psql(URL_, `select pg_size_pretty(sum(pg_total_relation_size(c.oid))) from pg_class c where c.relname like 'product_cost_months_2%' and c.relkind = 'r';`).trim();
await sql.end();
psql(URL_, "drop schema read_designs cascade;");

const report = [
  `# Read designs measured (issue 53), ${DB}, ${new Date().toISOString().slice(0, 10)}`,
  "",
  `Command: \`bun tests/bench/read-designs.ts --db ${DB} --runs ${RUNS}\`; medians of ${RUNS}; segment ${SEGMENT}; server times from psql's \\timing (output discarded), Bun times from the request to the last JSON byte written in memory.`,
  "",
  "| range | today's statement (server) | narrow int8, both edges in SQL (server) | narrow, end to end in Bun (JSON) | | both edges held in memory (Bun: arithmetic + JSON) |",
  "|---|---:|---:|---:|---|---:|",
  ...lines,
  "",
  "One edge (every product's totals through a day) read into vectors by catalogue position, as one row of arrays: server time (psql) and in Bun (postgres.js, parsed in place):",
  "",
  "| edge | from | server (arrays) | in Bun (arrays) | in Bun (COPY binary) |",
  "|---|---|---:|---:|---:|",
  ...edgeLines,
  "",
  `The narrow months' tables for ${months.length} months: ${sizes} (the rollup's monthly partitions, 12 months: ${rollupSize}).`,
];
console.log(report.join("\n"));
if (OUT) writeFileSync(OUT, report.join("\n") + "\n");
