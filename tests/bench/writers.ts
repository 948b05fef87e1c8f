// What the project's migrations cost the ETL's writers: the same writes, timed from the
// client, on the contract tables alone and on the same tables after `migrate` (its triggers
// on product_daily_costs and products, and the date index of 0002). Not part of `bun test`.
//
//   bun tests/bench/writers.ts                                  # 20,000 products, 60 days, 5 runs
//   bun tests/bench/writers.ts --products 5000 --days 30 --runs 3
//   bun tests/bench/writers.ts --runs 1 --after-migrate "alter table ... set (...)"   # a change to try
//
// BENCH_POSTGRES_URL (default postgres://postgres@127.0.0.1:5432) is the server; the databases
// pce_writers_contract and pce_writers_project are dropped, made there and left in place.
// Prints a Markdown section on stdout (tests/bench/bench.ts embeds it through writerBench()),
// progress on stderr.
//
// Each workload runs `runs` times on both databases, interleaved (the side that goes first
// alternates), and leaves the data as it found it (an untimed step undoes it) or alternates
// between two values, so both databases stay alike from run to run. Between workloads the
// project's database is refreshed (`bun src/main.ts refresh`, what the systemd timer runs),
// untimed for the writers, so that the change log does not grow without bound. Last, six
// concurrent writers on each database, while a seventh connection samples the lock waits.

import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import postgres from "postgres";

export interface WriterBenchOptions {
  /** e.g. postgres://postgres@127.0.0.1:5432, no database name */
  server: string;
  products: number;
  days: number;
  runs: number;
  log: (msg: string) => void;
  /** SQL run on the project's database after `migrate`: a change to try, e.g. a storage parameter. */
  afterMigrate?: string;
}

type Sql = postgres.Sql<{}>;

const ROOT = resolve(import.meta.dir, "../..");
const CONTRACT_DB = "pce_writers_contract";
const PROJECT_DB = "pce_writers_project";
const LAST_DAY = "2026-10-31"; // the existing rows end here; new rows go after it
const FIRST_NEW_DAY = "2026-11-01";
const PROJECT_TABLES = ["product_cost_deltas", "product_cost_months", "product_cost_answers"];
const BULK_GOAL_US = 15; // per affected row
const SINGLE_GOAL_US = 100; // per autocommit statement
const COLUMNS = "product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd";
// The ETL's upsert. Each statement fires both statement-level triggers, INSERT and UPDATE,
// whichever of its rows are new: the one with nothing to note still costs its call.
const ON_CONFLICT = `on conflict (product_id, cost_date) do update set
  purchase_cost_usd = excluded.purchase_cost_usd, inbound_freight_usd = excluded.inbound_freight_usd,
  shipping_to_customer_usd = excluded.shipping_to_customer_usd, warehouse_fees_usd = excluded.warehouse_fees_usd`;

const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const percentile = (xs: number[], q: number) => sorted(xs)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;
function median(xs: number[]): number {
  const s = sorted(xs);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
const ms = (x: number) => (x >= 100 ? x.toFixed(0) : x.toFixed(x >= 10 ? 1 : 2)) + " ms";
const us = (x: number) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(1)) + " µs";
const count = (n: number) => n.toLocaleString("en");
const verdict = (ok: boolean) => (ok ? "met" : "**missed**");

function psql(url: string, script: string): string {
  const r = Bun.spawnSync(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", url], { stdin: Buffer.from(script), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** `bun src/main.ts <command>` against `url`: its wall time and stdout (the JSON log lines). */
function project(command: string, url: string): { ms: number; stdout: string } {
  const started = performance.now();
  const r = Bun.spawnSync([process.execPath, "src/main.ts", command], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", DATABASE_URL: url },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`${command} failed: ${r.stderr.toString()}`);
  return { ms: performance.now() - started, stdout: r.stdout.toString() };
}

// ---- data: every value is a hash of its key, never random(), so both databases (and two runs) agree

/** Four amounts (6 decimals, ~3 % null) for the row `k.product_id, k.cost_date`; `salt` picks another set. */
function amounts(salt: number): string {
  const key = "k.product_id::bigint * 100000 + (k.cost_date - date '2000-01-01')";
  return [1, 2, 3, 4]
    .map((column) => {
      const h = `(hashint8extended(${key}, ${salt * 10 + column}) & 2147483647)`;
      return `case when ${h} % 100 < 3 then null else round((${h} % 500000000)::numeric / 1000000, 6) end`;
    })
    .join(", ");
}

/**
 * `rows` keys as a derived table k(product_id, cost_date): products 1..products on the day
 * `first` (an SQL date expression), then again on the next day in `direction`, and so on.
 */
function keys(rows: number, products: number, first: string, direction: 1 | -1): string {
  return `(select (i % ${products}) + 1 as product_id, ${first} + (i / ${products}) * ${direction} as cost_date
           from generate_series(0, ${rows - 1}) i) k`;
}

/** The first `rows` keys in the primary key's order, as k(product_id, cost_date): product 1's `days` days from `first`, then product 2's, ... */
function keysInOrder(rows: number, days: number, first: string): string {
  return `(select (i / ${days}) + 1 as product_id, ${first} + (i % ${days}) as cost_date from generate_series(0, ${rows - 1}) i) k`;
}

const upsert = (from: string, salt: number) => `insert into product_daily_costs (${COLUMNS}) select k.product_id, k.cost_date, ${amounts(salt)} from ${from} ${ON_CONFLICT}`;

/** The contract tables and their rows: products 1..N (~10 % samples), one row per product and day. */
function generate(url: string, products: number, days: number): void {
  psql(url, readFileSync(join(ROOT, "sql/migrations/0001_contract_tables.sql"), "utf8"));
  psql(
    url,
    `insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
     select p, 100000000 + p, 'SKU-' || lpad(p::text, 8, '0'), 'Product ' || p, p % 10 = 0 from generate_series(1, ${products}) p;
     insert into product_daily_costs (${COLUMNS})
     select k.product_id, k.cost_date, ${amounts(0)} from ${keys(products * days, products, `date '${LAST_DAY}' - ${days - 1}`, 1)};`,
  );
}

// ---- workloads

interface Workload {
  name: string;
  /** Rows (or, per statement, statements) a run writes. */
  rows: number;
  perStatement?: boolean;
  /** One run (run = 0, 1, ...): the time of each timed statement, in ms, COMMIT included. */
  timed: (sql: Sql, run: number) => Promise<number[]>;
  /** Untimed: puts the data back as it was before `timed`. */
  undo?: (sql: Sql) => Promise<unknown>;
}

async function time(write: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await write();
  return performance.now() - started;
}

/** One statement, autocommit, prepared (postgres.js sends its text once per connection). */
const statement = (text: string) => (sql: Sql) => sql.unsafe(text, [], { prepare: true });

const dropNewDays = statement(`delete from product_daily_costs where cost_date > date '${LAST_DAY}'`);

/** `rows` new rows after the last day, as COPY text (tab separated, \N for null). */
function copyText(rows: number, products: number): string {
  const first = Date.parse(`${FIRST_NEW_DAY}T00:00:00Z`);
  const lines: string[] = [];
  for (let i = 0; i < rows; i++) {
    const day = new Date(first + Math.floor(i / products) * 86_400_000).toISOString().slice(0, 10);
    const amount = (c: number) => ((i * 31 + c) % 37 === 0 ? "\\N" : (((i * 2_654_435_761 + c * 97) % 500_000_000) / 1e6).toFixed(6));
    lines.push(`${(i % products) + 1}\t${day}\t${amount(1)}\t${amount(2)}\t${amount(3)}\t${amount(4)}\n`);
  }
  return lines.join("");
}

function workloads(products: number, days: number): Workload[] {
  const existing = Math.min(20_000, products * days);
  const oldest = `date '${LAST_DAY}' - ${days - 1}`;
  const renamed = Math.min(20_000, products);
  const singles = Math.min(2_000, products);
  const singleDay = `date '${LAST_DAY}' - ${Math.floor(days / 2)}`; // mid-range: the other upserts write the last and new days
  const copy = copyText(20_000, products);
  return [
    {
      name: "upsert 40,000 daily rows",
      rows: 40_000,
      timed: async (sql) => [await time(() => statement(upsert(keys(40_000, products, `date '${FIRST_NEW_DAY}'`, 1), 1))(sql))],
      undo: dropNewDays,
    },
    {
      name: `upsert ${count(existing)} changed rows`,
      rows: existing,
      // The latest days, as an ETL re-sends them corrected; two sets of values in turn.
      timed: async (sql, run) => [await time(() => statement(upsert(keys(existing, products, `date '${LAST_DAY}'`, -1), 2 + (run % 2)))(sql))],
    },
    {
      name: "COPY 20,000 rows",
      rows: 20_000,
      timed: async (sql) => [
        await time(async () => {
          const writable = await sql`copy product_daily_costs (${sql.unsafe(COLUMNS)}) from stdin`.writable();
          await pipeline(Readable.from([copy]), writable); // ends at CommandComplete, after the commit
        }),
      ],
      undo: dropNewDays,
    },
    {
      name: `DELETE ${count(existing)} rows`,
      rows: existing,
      // The first rows in key order (whole products' histories, as when products go): a range
      // of the primary key on both sides. A join with a list of keys would hash the whole table
      // (the same 0.5 s on both sides, burying the difference in its noise), and a delete by
      // date would use the project's date index on one side only.
      timed: async (sql) => [
        await time(() =>
          statement(`delete from product_daily_costs where (product_id, cost_date) < (${Math.floor(existing / days) + 1}, ${oldest} + ${existing % days})`)(sql),
        ),
      ],
      // The same rows, with the values generate() gave them.
      undo: statement(`insert into product_daily_costs (${COLUMNS}) select k.product_id, k.cost_date, ${amounts(0)} from ${keysInOrder(existing, days, oldest)}`),
    },
    {
      name: `rename ${count(renamed)} products`,
      rows: renamed,
      // Adds the suffix, or takes it off: every run really changes every name.
      timed: async (sql) => [
        await time(() =>
          statement(`update products set product_name = case when product_name like '% (renamed)' then left(product_name, -10) else product_name || ' (renamed)' end
                     where product_id <= ${renamed}`)(sql),
        ),
      ],
    },
    {
      name: `${count(singles)} single-row autocommit upserts`,
      rows: singles,
      perStatement: true,
      // As a driver sends them: one prepared statement, one implicit transaction each.
      timed: async (sql, run) => {
        const times: number[] = [];
        for (let p = 1; p <= singles; p++) {
          const value = (p / 100 + (run % 2) / 1e6).toFixed(6);
          times.push(
            await time(
              () => sql`insert into product_daily_costs (${sql.unsafe(COLUMNS)})
                        values (${p}::bigint, ${sql.unsafe(singleDay)}, ${value}::numeric, ${value}::numeric, ${value}::numeric, ${value}::numeric)
                        ${sql.unsafe(ON_CONFLICT)}`,
            ),
          );
        }
        return times;
      },
    },
  ];
}

interface Side {
  name: "contract" | "project";
  sql: Sql;
}

interface Measured {
  workload: Workload;
  times: Record<Side["name"], number[][]>; // per run, the statements' times
}

interface Refresh {
  after: string;
  /** The command's wall time, process start included. */
  ms: number;
  /** The refresh's own time, from its "refreshed" log line (JSON on stdout), when it says. */
  workMs?: number;
}

/** `bun src/main.ts refresh` on the project's database, after the workload `after`. */
function refresh(url: string, after: string): Refresh {
  const { ms, stdout } = project("refresh", url);
  for (const line of stdout.split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as { msg?: string; ms?: number };
    if (entry.msg === "refreshed" && typeof entry.ms === "number") return { after, ms, workMs: entry.ms };
  }
  return { after, ms };
}

async function runWorkloads(options: WriterBenchOptions, sides: [Side, Side], projectUrl: string): Promise<{ measured: Measured[]; refreshes: Refresh[] }> {
  const measured = workloads(options.products, options.days).map((workload): Measured => ({ workload, times: { contract: [], project: [] } }));
  const refreshes: Refresh[] = [];
  for (let run = 0; run < options.runs; run++) {
    for (const m of measured) {
      // Whichever goes first alternates: a warm cache or a checkpoint favours neither side.
      for (const side of run % 2 === 0 ? sides : [sides[1], sides[0]]) {
        m.times[side.name].push(await m.workload.timed(side.sql, run));
        await m.workload.undo?.(side.sql);
      }
      const refreshed = refresh(projectUrl, m.workload.name);
      refreshes.push(refreshed);
      // What autovacuum would do in production (it may be off on a benchmark server): without
      // it dead rows pile up run after run, and the later runs write into ever larger tables.
      for (const side of sides) await side.sql.unsafe("vacuum");
      const [c, p] = [m.times.contract.at(-1)!, m.times.project.at(-1)!];
      options.log(`run ${run + 1}/${options.runs}, ${m.workload.name}: contract ${ms(median(c))}, project ${ms(median(p))}${c.length > 1 ? " (median per statement)" : ""}; refresh ${ms(refreshed.ms)}`);
    }
  }
  return { measured, refreshes };
}

// ---- concurrent writers and lock waits

interface LockWaits {
  ms: number;
  samples: number;
  samplesWithWait: number;
  maxWaiters: number;
  projectWaits: number; // samples with a waiter on (or whose query names) a project table
  projectWaitEvents: Map<string, number>; // those waiters by wait_event (e.g. extend: adding a page to the table)
  deadlocks: number;
}

const WRITERS = 6;
const TRANSACTIONS = 20;
const ROWS_PER_TRANSACTION = 500;

/** A small deterministic PRNG (mulberry32): both databases get the same transactions. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** `n` distinct products of 1..of, ascending (a partial Fisher-Yates shuffle). */
function pick(random: () => number, n: number, of: number): number[] {
  const ids = Array.from({ length: of }, (_, i) => i + 1);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(random() * (of - i));
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  return ids.slice(0, n).sort((a, b) => a - b);
}

/** One writer: TRANSACTIONS upserts of overlapping products on one of the last few days. */
async function writer(url: string, index: number, products: number, days: number): Promise<number> {
  const sql = postgres(url, { max: 1, prepare: true, onnotice: () => {} });
  const random = prng(index + 1);
  const of = Math.min(2_000, products);
  let deadlocks = 0;
  try {
    for (let t = 0; t < TRANSACTIONS; t++) {
      const day = `date '${LAST_DAY}' - ${Math.floor(random() * Math.min(7, days))}`;
      const ids = pick(random, Math.min(ROWS_PER_TRANSACTION, of), of);
      // In product order, so that these writers take their row locks in one order and never deadlock.
      const from = `(select unnest('{${ids.join(",")}}'::bigint[]) as product_id, ${day} as cost_date) k`;
      const text = `insert into product_daily_costs (${COLUMNS}) select k.product_id, k.cost_date, ${amounts(100 + index * TRANSACTIONS + t)} from ${from} order by k.product_id ${ON_CONFLICT}`;
      try {
        await sql.begin((tx) => tx.unsafe(text));
      } catch (err) {
        if ((err as { code?: string }).code !== "40P01") throw err;
        deadlocks++;
      }
    }
  } finally {
    await sql.end();
  }
  return deadlocks;
}

/** WRITERS concurrent writers on `url`, while a connection of its own samples pg_stat_activity every 5 ms. */
async function lockWaits(url: string, products: number, days: number): Promise<LockWaits> {
  const sampler = postgres(url, { max: 1, prepare: true, onnotice: () => {} });
  const result: LockWaits = { ms: 0, samples: 0, samplesWithWait: 0, maxWaiters: 0, projectWaits: 0, projectWaitEvents: new Map(), deadlocks: 0 };
  let writing = true;
  const sampling = (async () => {
    while (writing) {
      const [row] = await sampler<{ waiters: number; on_project: string[] }[]>`
        select count(*)::int as waiters,
               coalesce(array_agg(a.wait_event) filter (where a.query ~ ${PROJECT_TABLES.join("|")}
                 or exists (select 1 from pg_locks l join pg_class c on c.oid = l.relation
                            where l.pid = a.pid and not l.granted and (c.relname = any(${PROJECT_TABLES}::text[]) or c.relname like 'product_cost_months_%'))), '{}') as on_project
        from pg_stat_activity a
        where a.datname = current_database() and a.wait_event_type = 'Lock' and a.pid <> pg_backend_pid()`;
      result.samples++;
      if (row!.waiters > 0) result.samplesWithWait++;
      if (row!.on_project.length > 0) result.projectWaits++;
      for (const event of row!.on_project) result.projectWaitEvents.set(event, (result.projectWaitEvents.get(event) ?? 0) + 1);
      result.maxWaiters = Math.max(result.maxWaiters, row!.waiters);
      await Bun.sleep(5);
    }
  })();
  const started = performance.now();
  try {
    const deadlocks = await Promise.all(Array.from({ length: WRITERS }, (_, i) => writer(url, i, products, days)));
    result.deadlocks = deadlocks.reduce((a, b) => a + b, 0);
    result.ms = performance.now() - started;
  } finally {
    writing = false;
    await sampling;
    await sampler.end();
  }
  return result;
}

// ---- report

function report(options: WriterBenchOptions, measured: Measured[], refreshes: Refresh[], locks: Record<Side["name"], LockWaits>, facts: { version: string; dailyRows: number; migrateMs: number }): string {
  const lines: string[] = [];
  const p = (s = "") => lines.push(s);
  const goals: string[] = [];
  p(`## What the migrations cost the ETL's writers`);
  p();
  p("| write | with the project's migrations | contract tables alone | overhead per affected row |");
  p("|---|---:|---:|---:|");
  for (const { workload: w, times } of measured) {
    if (w.perStatement) {
      const [project, contract] = [times.project.flat(), times.contract.flat()];
      const overhead = (median(project) - median(contract)) * 1000;
      p(`| ${w.name} | ${ms(median(project))} median, ${ms(percentile(project, 0.95))} p95 per statement | ${ms(median(contract))} median, ${ms(percentile(contract, 0.95))} p95 per statement | ${us(overhead)} per statement (median) |`);
      goals.push(`- ${w.name}: ${us(overhead)} per statement (goal ≤ ${SINGLE_GOAL_US} µs): ${verdict(overhead <= SINGLE_GOAL_US)}`);
    } else {
      const [project, contract] = [median(times.project.flat()), median(times.contract.flat())];
      const overhead = ((project - contract) * 1000) / w.rows;
      p(`| ${w.name} | ${ms(project)} | ${ms(contract)} | ${us(overhead)} |`);
      goals.push(`- ${w.name}: ${us(overhead)} per affected row (goal ≤ ${BULK_GOAL_US} µs): ${verdict(overhead <= BULK_GOAL_US)}`);
    }
  }
  p();
  p(`Goals: bulk writes ≤ ${BULK_GOAL_US} µs per affected row; single-row autocommit upserts ≤ ${SINGLE_GOAL_US} µs per statement.`);
  p();
  for (const g of goals) p(g);
  p();
  p(
    `Medians of ${options.runs} runs per side (the single-row upserts: of all ${count(options.runs * measured.at(-1)!.workload.rows)} statements per side), timed from the client (postgres.js, one connection per database, prepared statements, autocommit, COMMIT included), interleaved contract/project. ` +
      `PostgreSQL ${facts.version}; ${count(options.products)} products, ${options.days} days ending ${LAST_DAY} (${count(facts.dailyRows)} daily rows) in ${CONTRACT_DB} and ${PROJECT_DB}; \`migrate\` on those rows took ${(facts.migrateMs / 1000).toFixed(1)} s.`,
  );
  p();
  const walls = refreshes.map((r) => r.ms);
  const works = refreshes.flatMap((r) => (r.workMs === undefined ? [] : [r.workMs]));
  const byWorkload = [...new Set(refreshes.map((r) => r.after))].map((after) => `${after} ${ms(median(refreshes.filter((r) => r.after === after).map((r) => r.ms)))}`);
  p(
    `Refresh after each workload (\`bun src/main.ts refresh\` on ${PROJECT_DB}; paid by the systemd timer, not by writers): median ${ms(median(walls))}, max ${ms(Math.max(...walls))} over ${walls.length} runs, process start included` +
      (works.length ? ` (the refresh itself: median ${ms(median(works))}, max ${ms(Math.max(...works))})` : "") +
      `; median after ${byWorkload.join(", ")}.`,
  );
  p();
  p(`### Lock waits between concurrent writers`);
  p();
  p(`${WRITERS} connections, each ${TRANSACTIONS} transactions upserting ${ROWS_PER_TRANSACTION} of products 1..${Math.min(2_000, options.products)} (in product order) on one of the last ${Math.min(7, options.days)} days; a seventh connection samples pg_stat_activity every 5 ms for backends with wait_event_type = 'Lock'.`);
  p();
  p("| database | wall time | samples | samples with a lock wait | max concurrent waiters | samples with a lock wait on a project table | deadlocks |");
  p("|---|---:|---:|---:|---:|---:|---:|");
  for (const [name, l] of [["contract tables alone", locks.contract], ["with the project's migrations", locks.project]] as const) {
    const events = [...l.projectWaitEvents].map(([event, n]) => `${event} ×${n}`).join(", ");
    p(`| ${name} | ${ms(l.ms)} | ${count(l.samples)} | ${count(l.samplesWithWait)} | ${l.maxWaiters} | ${l.projectWaits}${events ? ` (${events})` : ""} | ${l.deadlocks} |`);
  }
  p();
  p(
    `Lock waits on the contract's own rows (writers of the same day) are the ETL's business; a wait on ${PROJECT_TABLES.join(", ")} (a waiter's ungranted lock on one, or its query naming one) would be the project's: goal 0, ${verdict(locks.project.projectWaits === 0)}.` +
      (locks.project.projectWaitEvents.has("extend") ? ` ("extend": waiting for another writer to add a page to the table, the relation extension lock.)` : ""),
  );
  return lines.join("\n") + "\n";
}

// ---- the run

/** Makes both databases, runs the workloads and the concurrent writers; the Markdown section. */
export async function writerBench(options: WriterBenchOptions): Promise<string> {
  const server = options.server.replace(/\/+$/, "");
  const [contractUrl, projectUrl] = [`${server}/${CONTRACT_DB}`, `${server}/${PROJECT_DB}`];
  options.log(`creating ${CONTRACT_DB}: ${count(options.products)} products, ${options.days} days`);
  psql(`${server}/postgres`, `drop database if exists ${CONTRACT_DB} with (force);\ndrop database if exists ${PROJECT_DB} with (force);\ncreate database ${CONTRACT_DB};\n`);
  generate(contractUrl, options.products, options.days);
  psql(contractUrl, "vacuum analyze;");
  // A copy of the contract database, file for file: both start with the same rows in the same pages.
  options.log(`creating ${PROJECT_DB} from it, then migrate`);
  psql(`${server}/postgres`, `create database ${PROJECT_DB} template ${CONTRACT_DB};`);
  const migrateMs = project("migrate", projectUrl).ms;
  if (options.afterMigrate) psql(projectUrl, options.afterMigrate);
  psql(projectUrl, "vacuum analyze;");
  const dailyRows = Number(psql(contractUrl, "select count(*) from product_daily_costs;").trim());
  const version = psql(contractUrl, "show server_version;").trim();

  const sides: [Side, Side] = [
    { name: "contract", sql: postgres(contractUrl, { max: 1, prepare: true, onnotice: () => {} }) },
    { name: "project", sql: postgres(projectUrl, { max: 1, prepare: true, onnotice: () => {} }) },
  ];
  try {
    const { measured, refreshes } = await runWorkloads(options, sides, projectUrl);
    options.log(`lock waits: ${WRITERS} concurrent writers on each database`);
    // Last: whichever writer commits last wins, so this leaves the two databases' last days with different values.
    const locks = { contract: await lockWaits(contractUrl, options.products, options.days), project: await lockWaits(projectUrl, options.products, options.days) };
    refreshes.push(refresh(projectUrl, "the concurrent writers"));
    return report(options, measured, refreshes, locks, { version, dailyRows, migrateMs });
  } finally {
    await Promise.all(sides.map((s) => s.sql.end()));
  }
}

if (import.meta.main) {
  const argv = process.argv.slice(2);
  const option = (name: string, fallback: number) => {
    const i = argv.indexOf(`--${name}`);
    const value = i >= 0 ? Number(argv[i + 1]) : fallback;
    if (!Number.isInteger(value) || value < 1) throw new Error(`--${name} must be a positive integer`);
    return value;
  };
  const started = performance.now();
  const log = (msg: string) => console.error(`writers: ${msg}`);
  const markdown = await writerBench({
    server: process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432",
    products: option("products", 20_000),
    days: option("days", 60),
    runs: option("runs", 5),
    log,
    afterMigrate: argv.includes("--after-migrate") ? argv[argv.indexOf("--after-migrate") + 1] : undefined,
  });
  process.stdout.write(markdown);
  log(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
}
