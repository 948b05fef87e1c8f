// Kept answers (src/answer/answer-cache.ts, kept-file.ts) as the executable holds them: in files
// of TMPDIR that have no name (nothing left in the directory, nothing behind after a crash),
// one per representation made, each closed once the answer is dropped and its last reader is
// done, whether that reader took the whole body, asked HEAD, or vanished mid-body.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import postgres from "postgres";
import { cleanEnv, isolatedBinary, postgresFixtureEnv, startBinary, type RunningBinary } from "../support/binary.ts";
import type { DailyCostFixture, ProductFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const KEY = "kept-answers-e2e-key-7d1f";
const PATH = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31&segment=all";
const auth = { authorization: `Bearer ${KEY}` };

// About 400 KB of JSON: more than a kept answer sent whole (64 KiB), so it is read back in chunks.
const PRODUCTS: ProductFixture[] = Array.from({ length: 2000 }, (_, i) => ({
  product_id: i + 1,
  erp_product_id: 700000 + i,
  erp_sku: `SKU-${String(i).padStart(5, "0")}`,
  product_name: `Product ${i} ${"name ".repeat(20)}`,
}));
const DAILY: DailyCostFixture[] = PRODUCTS.map((p, i) => ({ product_id: p.product_id, cost_date: `2024-01-${String(1 + (i % 28)).padStart(2, "0")}`, purchase_cost_usd: `${i}.5` }));

describeWithPostgres("kept answers in the executable", () => {
  let bin: { dir: string; path: string };
  let env: Record<string, string>;
  let tmp: string;
  let service: RunningBinary;

  beforeAll(async () => {
    bin = isolatedBinary();
    env = { ...(await postgresFixtureEnv({ products: PRODUCTS, daily: DAILY })), PRODUCT_COST_API_KEYS: KEY, ANSWER_CACHE_MB: "64" };
    tmp = mkdtempSync(join(tmpdir(), "pce-kept-"));
    service = await startBinary(bin.path, { ...env, TMPDIR: tmp }, [], bin.dir);
  });
  afterAll(async () => {
    await service?.stop();
    rmSync(tmp, { recursive: true, force: true });
    rmSync(bin.dir, { recursive: true, force: true });
  });

  /** The service's open files in TMPDIR: every one unlinked, so each shows as "(deleted)". */
  const keptFiles = () =>
    readdirSync(`/proc/${service.proc.pid}/fd`)
      .map((fd) => {
        try {
          return readlinkSync(`/proc/${service.proc.pid}/fd/${fd}`);
        } catch {
          return "";
        }
      })
      .filter((target) => target.startsWith(`${tmp}/product-cost-export-`));

  async function settles(expected: number): Promise<number> {
    for (let i = 0; i < 100 && keptFiles().length !== expected; i++) await Bun.sleep(20);
    return keptFiles().length;
  }

  /** A client that reads the first bytes of the body and vanishes. */
  function vanishMidBody(): Promise<void> {
    const { port } = new URL(service.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => socket.write(`GET ${PATH} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${KEY}\r\n\r\n`));
      socket.once("data", () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", reject);
    });
  }

  test("kept without a name, read back byte for byte, and closed once dropped and no longer read (HEAD and vanished clients too)", async () => {
    const first = await fetch(service.url + PATH, { headers: auth });
    const body = new Uint8Array(await first.arrayBuffer());
    expect(first.status).toBe(200);
    expect(body.byteLength).toBeGreaterThan(300_000);
    expect(await settles(1)).toBe(1);

    const hit = await fetch(service.url + PATH, { headers: auth });
    expect(Buffer.from(await hit.arrayBuffer()).equals(Buffer.from(body))).toBe(true);
    expect(hit.headers.get("etag")).toBe(first.headers.get("etag"));
    const br = await fetch(service.url + PATH, { headers: { ...auth, "accept-encoding": "br" }, decompress: false });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).equals(Buffer.from(body))).toBe(true);
    expect(await settles(2)).toBe(2); // the body and its br variant

    for (let i = 0; i < 3; i++) {
      const head = await fetch(service.url + PATH, { method: "HEAD", headers: auth });
      expect([head.status, (await head.arrayBuffer()).byteLength]).toEqual([200, 0]);
      await vanishMidBody();
    }
    expect(readdirSync(tmp)).toEqual([]); // no names: a crash leaves nothing behind
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toContain("product_cost_export_answer_cache_misses_total 1\n");

    // A write changes the answer's version: the next request drops the old answer and keeps
    // the new one. Had any reader above kept its file open, the old two would still be held.
    const sql = postgres(env.DATABASE_URL!, { max: 1, onnotice: () => {} });
    try {
      await sql`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (1, '2024-01-30', 1000)`;
    } finally {
      await sql.end();
    }
    const after = await fetch(service.url + PATH, { headers: auth });
    expect(Buffer.from(await after.arrayBuffer()).equals(Buffer.from(body))).toBe(false);
    expect(await settles(1)).toBe(1);
  });

  test("a TMPDIR where no file can be made stops the start: one line, exit code 2", async () => {
    const proc = Bun.spawn([bin.path, "serve"], { env: cleanEnv({ ...env, PORT: "0", HOST: "127.0.0.1", TMPDIR: join(tmp, "missing") }), stdout: "ignore", stderr: "pipe" });
    const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
    expect(code).toBe(2);
    expect(stderr).toContain(`ANSWER_CACHE_MB=64 keeps answers in files under ${join(tmp, "missing")}, and none can be made there (`);
    expect(stderr).toContain("set TMPDIR to a writable directory, or ANSWER_CACHE_MB=0");
  });
});
