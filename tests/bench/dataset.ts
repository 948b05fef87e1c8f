// The benchmarks' generated database (tests/bench/generate.sql), made once per scale on the
// local PostgreSQL and reused while its generator, the contract and the scale are the same:
// the contract tables alone, the generated rows, then `migrate` (the date index and the
// rollup built from millions of existing rows, as on an ETL's database). bench.ts and
// refresh-shapes.ts both start from it.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

export const SCALES: Record<string, number> = { "1k": 1_000, "5k": 5_000, "20k": 20_000, "50k": 50_000, "200k": 200_000 };

export interface DatasetMeta {
  generate_s: number;
  daily_rows: number;
  generated_at: string;
  migrate_s: number;
}

export interface Dataset {
  name: string;
  url: string;
  products: number;
  meta: DatasetMeta;
  /** Made by an earlier run (and migrated now, in `migrateNowS`, when migrations were added since). */
  reused: boolean;
  migrateNowS: number;
}

export interface DatasetOptions {
  scale: string;
  /** postgres://user@host:port of the server, no database. */
  server: string;
  /** The executable whose `migrate` builds the rollup. */
  binary: string;
  reuse: boolean;
  log: (msg: string) => void;
}

/** psql with ON_ERROR_STOP, unaligned tuples only; its stdout. Throws with psql's stderr. */
export function psql(url: string, script: string, vars: Record<string, string> = {}): string {
  const args = ["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", ...Object.entries(vars).flatMap(([k, v]) => ["-v", `${k}=${v}`]), url];
  const r = Bun.spawnSync(args, { stdin: Buffer.from(script), stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`psql failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

function migrate(binary: string, url: string): { ok: boolean; seconds: number } {
  const started = performance.now();
  const m = Bun.spawnSync([binary, "migrate"], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: url }, stdout: "ignore", stderr: "inherit" });
  return { ok: m.exitCode === 0, seconds: (performance.now() - started) / 1000 };
}

/** The generated, migrated database of `scale`: reused when `reuse` and made by this generator, else made now. */
export function prepareDataset(options: DatasetOptions): Dataset {
  const products = SCALES[options.scale];
  if (!products) throw new Error(`--scale must be one of ${Object.keys(SCALES).join(", ")}`);
  const name = `pce_bench_${options.scale}`;
  const url = `${options.server}/${name}`;
  const { log } = options;
  const generator = readFileSync(join(ROOT, "tests/bench/generate.sql"), "utf8");
  const contract = readFileSync(join(ROOT, "sql/migrations/0001_contract_tables.sql"), "utf8");
  const generatorSha = createHash("sha256").update(generator).update(contract).update(String(products)).digest("hex").slice(0, 16);

  let meta: DatasetMeta | undefined;
  if (options.reuse) {
    try {
      const row = psql(url, `select generate_s, daily_rows, generated_at::date, migrate_s from bench_meta where generator = '${generatorSha}';`).trim();
      if (row) {
        const [g, d, at, m] = row.split("|");
        meta = { generate_s: Number(g), daily_rows: Number(d), generated_at: at!, migrate_s: Number(m) };
        log(`reusing ${name} (generated ${at})`);
      } else log(`${name} was not made by this generator: generating it again`);
    } catch {
      log(`${name} is missing or incomplete: generating it`);
    }
  }
  let migrateNowS = 0;
  if (meta) {
    // Migrations newer than the data (a reused database): applied now. One edited since it
    // was applied there (while developing it) cannot be: then the dataset is made again.
    const m = migrate(options.binary, url);
    migrateNowS = m.seconds;
    if (!m.ok) {
      log(`migrate failed on the reused ${name}: generating it again`);
      meta = undefined;
    }
  }
  const reused = meta !== undefined;
  if (!meta) {
    log(`creating ${name}: ${products} products, 730 days (takes minutes at 50k)`);
    psql(`${options.server}/postgres`, `drop database if exists ${name} with (force);\ncreate database ${name};\n`);
    psql(url, contract); // the contract tables only: an ETL's database before this service's migrations
    const t0 = performance.now();
    psql(url, generator, { products: String(products) });
    const generateS = (performance.now() - t0) / 1000;
    psql(url, "vacuum analyze;");
    log("migrate on the existing rows (date index, rollup build)");
    const m = migrate(options.binary, url);
    if (!m.ok) throw new Error("migrate failed");
    migrateNowS = m.seconds;
    psql(url, "vacuum analyze;");
    const dailyRows = Number(psql(url, "select count(*) from product_daily_costs;").trim());
    psql(url, `create table bench_meta (generator text, generate_s numeric, daily_rows bigint, generated_at timestamptz, migrate_s numeric);
      insert into bench_meta values ('${generatorSha}', ${generateS.toFixed(1)}, ${dailyRows}, now(), ${migrateNowS.toFixed(1)});`);
    meta = { generate_s: Number(generateS.toFixed(1)), daily_rows: dailyRows, generated_at: new Date().toISOString().slice(0, 10), migrate_s: Number(migrateNowS.toFixed(1)) };
  }
  return { name, url, products, meta, reused, migrateNowS };
}
