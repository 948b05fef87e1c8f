// The recipes of docs/clients.md run, as written there, against the built executable: each
// titled code block is taken out of the page and run (curl by bash, Python in a venv with
// pandas, Polars and DuckDB, TypeScript with openapi-typescript, tsc and Bun) with PCE_URL and
// PCE_API_KEY set, and what it prints must be the exact values: an erp_product_id above 2^53
// and an amount of 20 significant digits, which a float64 anywhere on the way would round.
// Two recipes are also run with their typing removed, to show that the fixture catches it.
//
// The venv is made once under the temp dir, named by a hash of the interpreter and the
// pinned requirements, and reused by later runs (pip installs from the machine's own
// configuration: its local indexes). Without `python3 -m venv` the test fails and says so.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import type { DailyCostFixture, ProductFixture } from "../support/fixtures.ts";

const ROOT = resolve(import.meta.dir, "../..");
const PAGE = readFileSync(join(ROOT, "docs/clients.md"), "utf8");
const KEY = "clients-recipes-key-0123456789abcdef";

/** What the venv holds: the versions docs/clients.md says it was tested with. */
const REQUIREMENTS = ["pandas==3.0.6", "polars==1.44.2", "duckdb==1.5.6", "pyarrow==25.0.1"];

// One product per rule: an id above 2^53 whose purchase cost has 20 significant digits (and
// whose total of four amounts has 21), a costed zero with a name CSV must quote, an unmapped
// product (a null id: pandas' int64 cannot hold it), a sample and a day outside the range (left out).
const PRODUCTS: ProductFixture[] = [
  { product_id: 1, erp_product_id: "9007199254740993", erp_sku: "SKU-BIG", product_name: "Big id, big cost" },
  { product_id: 2, erp_product_id: 1002, erp_sku: "SKU-A", product_name: 'Alpha, "quoted"' },
  { product_id: 3, erp_product_id: null, erp_sku: null, product_name: "Unmapped" },
  { product_id: 4, erp_product_id: 1004, erp_sku: "SKU-S", product_name: "A sample", is_sample: true },
];
const DAILY: DailyCostFixture[] = [
  { product_id: 1, cost_date: "2024-01-20", purchase_cost_usd: "99999999999999.999998", inbound_freight_usd: "0.1", warehouse_fees_usd: "0.000001" },
  { product_id: 1, cost_date: "2024-01-21", inbound_freight_usd: "0.2" },
  { product_id: 1, cost_date: "2024-02-01", purchase_cost_usd: "1000" },
  { product_id: 2, cost_date: "2024-01-05", purchase_cost_usd: "0" },
  { product_id: 3, cost_date: "2024-01-10", warehouse_fees_usd: "-2.5" },
  { product_id: 4, cost_date: "2024-01-10", purchase_cost_usd: "7" },
];

const CSV =
  "erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd\r\n" +
  '1002,SKU-A,"Alpha, ""quoted""",0,,,\r\n' +
  '9007199254740993,SKU-BIG,"Big id, big cost",99999999999999.999998,0.3,,0.000001\r\n' +
  ",,Unmapped,,,,-2.5\r\n";
const NULLS = '"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":null';
const JSON_BODY =
  `[{"erp_product_id":1002,"erp_sku":"SKU-A","product_name":"Alpha, \\"quoted\\"","purchase_cost_usd":0,${NULLS}},` +
  '{"erp_product_id":9007199254740993,"erp_sku":"SKU-BIG","product_name":"Big id, big cost","purchase_cost_usd":99999999999999.999998,"inbound_freight_usd":0.3,"shipping_to_customer_usd":null,"warehouse_fees_usd":0.000001},' +
  '{"erp_product_id":null,"erp_sku":null,"product_name":"Unmapped","purchase_cost_usd":null,"inbound_freight_usd":null,"shipping_to_customer_usd":null,"warehouse_fees_usd":-2.5}]';

/** The line every recipe prints for the big product: id, name, purchase cost, total of the four amounts. */
const BIG = "9007199254740993\tBig id, big cost\t99999999999999.999998\t100000000000000.299999";
/** Each recipe's whole output: the three January products of the normal segment, in the service's order. */
const PRINTED: Record<string, string[]> = {
  "python-json": ['1002\tAlpha, "quoted"\t0\t0', BIG, "None\tUnmapped\tNone\t-2.5"],
  pandas: ['1002\tAlpha, "quoted"\t0\t0', BIG, "<NA>\tUnmapped\tNone\t-2.5"],
  polars: ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "None\tUnmapped\tNone\t-2.500000"],
  duckdb: ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "None\tUnmapped\tNone\t-2.500000"],
  typescript: ['1002\tAlpha, "quoted"\t0\t0.000000', BIG, "\tUnmapped\t\t-2.500000"],
  pyarrow: ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "None\tUnmapped\tNone\t-2.500000"],
  "arrow-pandas": ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "<NA>\tUnmapped\t<NA>\t-2.500000"],
  "arrow-polars": ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "None\tUnmapped\tNone\t-2.500000"],
  "arrow-duckdb": ['1002\tAlpha, "quoted"\t0.000000\t0.000000', BIG, "None\tUnmapped\tNone\t-2.500000"],
};

interface Recipe {
  lang: string;
  title: string;
  code: string;
}

/** The page's titled code blocks (```python title="pandas"), by title. */
function recipes(markdown: string): Map<string, Recipe> {
  const found = new Map<string, Recipe>();
  for (const [, lang, title, code] of markdown.matchAll(/^```(\w+) title="([^"]+)"\n([\s\S]*?)^```$/gm)) {
    if (found.has(title!)) throw new Error(`docs/clients.md: two recipes titled ${title}`);
    found.set(title!, { lang: lang!, title: title!, code: code! });
  }
  return found;
}

const RECIPES = recipes(PAGE);
const recipe = (title: string): Recipe => {
  const r = RECIPES.get(title);
  if (!r) throw new Error(`docs/clients.md has no code block titled "${title}"`);
  return r;
};

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function run(cmd: string[], options: { cwd: string; env: Record<string, string>; timeoutMs?: number }): Promise<Ran> {
  const proc = Bun.spawn(cmd, { cwd: options.cwd, env: options.env, stdin: "ignore", stdout: "pipe", stderr: "pipe", timeout: options.timeoutMs ?? 60_000 });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** The real interpreter behind `python3` (a pyenv shim needs the caller's environment), or a clear failure. */
function python3(): string {
  const found = Bun.spawnSync(["python3", "-c", "import sys, venv, ensurepip; print(sys.executable)"], { stdout: "pipe", stderr: "pipe" });
  if (found.exitCode !== 0) {
    throw new Error(
      "docs/clients.md's Python recipes need `python3 -m venv` (python3 with its venv and ensurepip modules; " +
        `on Debian: apt-get install python3-venv): ${found.stderr.toString().trim() || "python3 not found"}`,
    );
  }
  return found.stdout.toString().trim();
}

/** A venv with REQUIREMENTS: made once (into a temp name, then renamed, so a half-made one is never used), then reused. */
async function pythonVenv(): Promise<string> {
  const interpreter = python3();
  const version = Bun.spawnSync([interpreter, "--version"], { stdout: "pipe" }).stdout.toString().trim();
  const hash = createHash("sha256").update(JSON.stringify([interpreter, version, REQUIREMENTS])).digest("hex").slice(0, 16);
  const dir = join(tmpdir(), `pce-clients-venv-${hash}`);
  const python = join(dir, "bin", "python");
  if (existsSync(join(dir, "complete"))) return python;
  const making = `${dir}.making-${process.pid}`;
  rmSync(making, { recursive: true, force: true });
  const env = { ...process.env } as Record<string, string>;
  const venv = await run([interpreter, "-m", "venv", making], { cwd: tmpdir(), env, timeoutMs: 120_000 });
  if (venv.code !== 0) throw new Error(`python3 -m venv failed (on Debian: apt-get install python3-venv): ${venv.stderr}`);
  // The machine's pip configuration says where packages come from; --retries 0: an index that
  // cannot be reached (the public one, offline) is passed over at once instead of after retries.
  const pip = await run([join(making, "bin", "python"), "-m", "pip", "install", "--retries", "0", "--progress-bar", "off", ...REQUIREMENTS], { cwd: tmpdir(), env, timeoutMs: 540_000 });
  if (pip.code !== 0) throw new Error(`pip install ${REQUIREMENTS.join(" ")} failed (pip config list: where it looks):\n${pip.stdout.slice(-2000)}\n${pip.stderr.slice(-2000)}`);
  writeFileSync(join(making, "complete"), REQUIREMENTS.join("\n") + "\n");
  try {
    renameSync(making, dir);
  } catch {
    rmSync(making, { recursive: true, force: true }); // another run made it meanwhile
  }
  if (!existsSync(join(dir, "complete"))) throw new Error(`${dir} is incomplete: remove it`);
  return python;
}

describe("docs/clients.md's recipes, run against the executable", () => {
  let server: RunningBinary;
  let python: string;
  let work: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    const bin = isolatedBinary();
    const [database, venv] = await Promise.all([fixtureDatabaseEnv(bin.path, { products: PRODUCTS, daily: DAILY }), pythonVenv()]);
    python = venv;
    server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    // Inside the checkout (ignored by git), so that npx, tsc and Bun find its node_modules.
    work = join(ROOT, ".build", `clients-test-${process.pid}`);
    rmSync(work, { recursive: true, force: true });
    mkdirSync(work, { recursive: true });
    env = {
      PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: process.env.HOME ?? tmpdir(),
      PCE_URL: server.url,
      PCE_API_KEY: KEY,
    };
  }, 600_000);

  afterAll(async () => {
    await server?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  test("every titled block of the page is one this test runs", () => {
    expect([...RECIPES.keys()].sort()).toEqual(["arrow-duckdb", "arrow-pandas", "arrow-polars", "curl-csv", "curl-json", "duckdb", "pandas", "polars", "pyarrow", "python-json", "typescript", "typescript-generate"]);
  });

  test("curl: the CSV and the JSON files are the service's exact bytes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-clients-curl-"));
    for (const title of ["curl-csv", "curl-json"]) {
      const r = await run(["bash", "-euo", "pipefail", "-c", recipe(title).code], { cwd: dir, env });
      expect([title, r.code, r.stderr]).toEqual([title, 0, ""]);
    }
    expect(readFileSync(join(dir, "product-costs.csv"), "utf8")).toBe(CSV);
    expect(readFileSync(join(dir, "product-costs.json"), "utf8")).toBe(JSON_BODY);
    // A wrong key: curl exits 22 and the file holds the error, as the page says.
    const wrong = await run(["bash", "-c", recipe("curl-csv").code], { cwd: dir, env: { ...env, PCE_API_KEY: "not-a-key" } });
    expect(wrong.code).toBe(22);
    expect(readFileSync(join(dir, "product-costs.csv"), "utf8")).toBe('{"detail":"INVALID_API_KEY"}');
    rmSync(dir, { recursive: true, force: true });
  });

  /** Runs Python `code` in the venv (as recipe_<name>.py: a file named pandas.py would shadow pandas). */
  const runPython = async (name: string, code: string) => {
    const file = join(work, `recipe_${name.replace(/\W/g, "_")}.py`);
    writeFileSync(file, code);
    return run([python, file], { cwd: work, env });
  };

  for (const title of ["python-json", "pandas", "polars", "duckdb", "pyarrow", "arrow-pandas", "arrow-polars", "arrow-duckdb"]) {
    test(`${title}: prints the big id and the 20-digit amount exactly, and their exact total`, async () => {
      const r = await runPython(title, recipe(title).code);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      expect(r.stdout.trimEnd().split("\n")).toEqual(PRINTED[title]!);
    }, 60_000);
  }

  test("the fixture catches a recipe that lets floats in: pandas guessing its types, DuckDB reading DOUBLE, Arrow into pandas without its types", async () => {
    const pandas = recipe("pandas").code;
    const guessing = pandas.replace(/^\s*dtype=.*\n/m, "").replace(/^\s*converters=.*\n/m, "");
    expect(guessing).not.toBe(pandas);
    const p = await runPython("pandas-guessing", guessing);
    expect(p.code).toBe(0);
    expect(p.stdout).not.toContain(BIG);
    expect(p.stdout).toContain("9007199254740992"); // float64: the neighbouring id

    const duck = recipe("duckdb").code;
    const doubles = duck.replaceAll("DECIMAL(38,6)", "DOUBLE"); // what the sniffer would pick
    expect(doubles).not.toBe(duck);
    const d = await runPython("duckdb-doubles", doubles);
    expect([d.code, d.stderr]).toEqual([0, ""]);
    expect(d.stdout).not.toContain(BIG);
    expect(d.stdout).toContain("9007199254740993\tBig id, big cost\t100000000000000.0\t100000000000000.3");

    // The Arrow stream is exact, but pandas' plain to_pandas() makes an id column with a null float64.
    const arrow = recipe("arrow-pandas").code;
    const plain = arrow.replace("types_mapper=pd.ArrowDtype", "");
    expect(plain).not.toBe(arrow);
    const a = await runPython("arrow-pandas-plain", plain);
    expect(a.code).toBe(0);
    expect(a.stdout).not.toContain(BIG);
    expect(a.stdout).toContain("9007199254740992.0\tBig id, big cost");
  }, 60_000);

  test("TypeScript: types generated from /openapi.json type-check the openapi-fetch recipe, which prints the exact values", async () => {
    const generate = await run(["bash", "-euo", "pipefail", "-c", recipe("typescript-generate").code], { cwd: work, env, timeoutMs: 90_000 });
    expect(generate.code).toBe(0);
    expect(readFileSync(join(work, "product-costs.d.ts"), "utf8")).toContain('"/external/v1/product-costs"');
    writeFileSync(join(work, "client.ts"), recipe("typescript").code);
    const tsc = await run(
      [process.execPath, "x", "tsc", "--noEmit", "--strict", "--module", "preserve", "--moduleResolution", "bundler", "--target", "es2022", "--skipLibCheck", "--types", "bun-types", "client.ts"],
      { cwd: work, env, timeoutMs: 90_000 },
    );
    expect([tsc.code, tsc.stdout + tsc.stderr]).toEqual([0, ""]);
    const client = await run([process.execPath, "client.ts"], { cwd: work, env });
    expect([client.code, client.stderr]).toEqual([0, ""]);
    expect(client.stdout.trimEnd().split("\n")).toEqual(PRINTED.typescript!);
  }, 120_000);

  test("Power Query (read only, not run): a literal base URL, the path and the range in RelativePath and Query, the key in Headers", () => {
    const m = /^```m\n([\s\S]*?)^```$/m.exec(PAGE)?.[1];
    expect(m).toBeDefined();
    expect(m).toMatch(/Web\.Contents\(\s*"https:\/\/[^"&]+",\s*\[/); // the first argument a string literal, nothing concatenated
    expect(m).toContain('RelativePath = "external/v1/product-costs"');
    expect(m).toMatch(/Query = \[month_from = \w+, month_to = \w+/);
    expect(m).toMatch(/Headers = \[Authorization = "Bearer " & \w+, Accept = "text\/csv"\]/);
    expect(m).not.toContain("Json.Document");
  });
});
