// Runs the compiled executable as a black box: copied alone into an empty temp dir (so it
// can rely on nothing beside it), started with a clean environment, read through its logs.

import { copyFileSync, existsSync, mkdtempSync, readdirSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe } from "bun:test";
import type { Subprocess } from "bun";
import type { DailyCostFixture, ProductFixture } from "./fixtures.ts";
import { POSTGRES } from "./postgres.ts";

export const BINARY = resolve(import.meta.dir, "../../dist/product-cost-export");

const ROOT = resolve(import.meta.dir, "../..");

/** The newest source the executable is built from (src/, sql/, package.json, bun.lock, build.sh), and its time. */
export function newestSource(): { file: string; mtimeMs: number } {
  let newest = { file: "", mtimeMs: 0 };
  const visit = (path: string) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const entry of readdirSync(path)) visit(join(path, entry));
    else if (stat.mtimeMs > newest.mtimeMs) newest = { file: path.slice(ROOT.length + 1), mtimeMs: stat.mtimeMs };
  };
  for (const path of ["src", "sql", "package.json", "bun.lock", "build.sh"]) visit(join(ROOT, path));
  return newest;
}

/**
 * The executable the e2e tests run, checked: present, and built after every source changed
 * (a stale dist/ would test yesterday's code and pass or fail for the wrong reason).
 */
export function builtBinary(path = BINARY): string {
  if (!existsSync(path)) throw new Error(`${path} is missing: run \`bash build.sh\` first`);
  const newest = newestSource();
  if (statSync(path).mtimeMs < newest.mtimeMs) throw new Error(`${path} is older than ${newest.file}: run \`bash build.sh\` (or \`bash build.sh test\`)`);
  return path;
}

/** A fresh empty directory holding only a copy of the executable. */
export function isolatedBinary(): { dir: string; path: string } {
  builtBinary();
  const dir = mkdtempSync(join(tmpdir(), "pce-bin-"));
  const path = join(dir, "product-cost-export");
  copyFileSync(BINARY, path);
  Bun.spawnSync(["chmod", "+x", path]);
  return { dir, path };
}

/** The environment the executable sees: PATH and HOME only, plus what the test gives. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: "/usr/bin:/bin", HOME: tmpdir(), ...extra };
}

export interface RunningBinary {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  url: string;
  /** Every stdout line so far, parsed as JSON. */
  lines: Record<string, unknown>[];
  stderr(): string;
  waitForLine(predicate: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface StartOptions {
  /** The line that says the server is up (default: the JSON "listening" line). */
  ready?: (line: Record<string, unknown>) => boolean;
  /** The base URL, when the ready line does not carry it (e.g. LOG_FORMAT=pretty). */
  url?: (line: Record<string, unknown>) => string;
}

export async function startBinary(
  path: string,
  env: Record<string, string>,
  args: string[] = [],
  cwd?: string,
  options: StartOptions = {},
): Promise<RunningBinary> {
  const proc = Bun.spawn([path, ...args], { env: cleanEnv({ PORT: "0", HOST: "127.0.0.1", ...env }), stdout: "pipe", stderr: "pipe", stdin: "ignore", cwd });
  const lines: Record<string, unknown>[] = [];
  let err = "";
  const waiters: (() => void)[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of proc.stdout) {
      buf += decoder.decode(chunk, { stream: true });
      let nl;
      while ((nl = buf.indexOf("\n")) !== -1) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          lines.push(JSON.parse(line));
        } catch {
          lines.push({ raw: line });
        }
        waiters.splice(0).forEach((w) => w());
      }
    }
    waiters.splice(0).forEach((w) => w());
  })();
  void (async () => {
    for await (const chunk of proc.stderr) err += new TextDecoder().decode(chunk);
  })();

  const waitForLine = async (predicate: (l: Record<string, unknown>) => boolean, timeoutMs = 15000) => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = lines.find(predicate);
      if (found) return found;
      if (Date.now() > deadline || proc.exitCode !== null) {
        throw new Error(`no such log line within ${timeoutMs} ms; stdout: ${JSON.stringify(lines)}; stderr: ${err}`);
      }
      await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)]);
    }
  };

  const listening = await waitForLine(options.ready ?? ((l) => l.msg === "listening"));
  return {
    proc,
    url: (options.url ? options.url(listening) : String(listening.url)).replace(/\/$/, ""),
    lines,
    stderr: () => err,
    waitForLine,
    async stop(signal = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(signal);
      return await proc.exited;
    },
  };
}

/** Rows to load: the endpoint fixture (tests/http/fixture.ts) unless a test brings its own. */
export interface FixtureRows {
  products: ProductFixture[];
  daily: DailyCostFixture[];
}

async function rowsOr(rows: FixtureRows | undefined): Promise<FixtureRows> {
  if (rows) return rows;
  const { DAILY, PRODUCTS } = await import("../http/fixture.ts");
  return { products: PRODUCTS, daily: DAILY };
}

/** The run's PostgreSQL database, holding the endpoint fixture (or `rows`). */
export async function postgresFixtureEnv(rows?: FixtureRows): Promise<Record<string, string>> {
  const { testDatabase } = await import("./database.ts");
  const { loadFixture } = await import("./fixtures.ts");
  const { products, daily } = await rowsOr(rows);
  const db = await testDatabase();
  await loadFixture(db.admin, products, daily);
  return { DATABASE_URL: db.url };
}

/** An embedded data dir holding the endpoint fixture (or `rows`), loaded with the executable's own load-csv. */
export async function embeddedFixtureEnv(binaryPath: string, rows?: FixtureRows): Promise<Record<string, string>> {
  const { writeFixtureCsv } = await import("./csv-fixture.ts");
  const { products, daily } = await rowsOr(rows);
  const dir = mkdtempSync(join(tmpdir(), "pce-fixture-"));
  const files = writeFixtureCsv(dir, products, daily);
  const env = { DATA_DIR: join(dir, "db") };
  for (const [table, file] of [["products", files.products], ["product_daily_costs", files.daily]] as const) {
    const r = Bun.spawnSync([binaryPath, "load-csv", table, file], { env: cleanEnv(env), stdin: "ignore" });
    if (r.exitCode !== 0) throw new Error(`load-csv ${table} failed: ${r.stderr.toString()}`);
  }
  return env;
}

export interface BinaryBackend {
  name: string;
  env(binaryPath: string): Promise<Record<string, string>>;
}

/** Both databases the executable can serve, each holding the endpoint fixture. */
export const BINARY_BACKENDS: readonly BinaryBackend[] = [
  { name: "postgresql", env: () => postgresFixtureEnv() },
  { name: "embedded", env: (binaryPath) => embeddedFixtureEnv(binaryPath) },
];

/** One describe block per backend of the executable (`$name`); PostgreSQL's is reported as skipped where there is none. */
export function describeBinaryBackends(name: string, fn: (backend: BinaryBackend) => void): void {
  for (const backend of BINARY_BACKENDS) {
    const title = name.replace("$name", backend.name);
    if (backend.name === "postgresql" && !POSTGRES) describe.skip(`${title} (skipped: no PostgreSQL)`, () => fn(backend));
    else describe(title, () => fn(backend));
  }
}

/**
 * Settings that point the executable at a database holding the endpoint fixture (or `rows`): the run's
 * PostgreSQL when TEST_DATABASE_URL is set, else an embedded data dir filled with load-csv.
 */
export async function fixtureDatabaseEnv(binaryPath: string, rows?: FixtureRows): Promise<Record<string, string>> {
  const { HAS_POSTGRESQL } = await import("./backends.ts");
  return HAS_POSTGRESQL ? postgresFixtureEnv(rows) : embeddedFixtureEnv(binaryPath, rows);
}
