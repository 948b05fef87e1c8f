// Issue 42: reading a hot standby while the primary vacuums. With max_standby_streaming_delay
// = 0 the standby cancels a read at once when replaying a cleanup that removes rows its
// snapshot still needs (SQLSTATE 40001, "conflict with recovery"). On 6069913 such a read was
// a 500, or a transfer cut mid-answer. A read is now retried once on a fresh session when no
// byte was sent (always: a 200 goes out once its answer is read), else a clean 503 whose log
// line names RECOVERY_CONFLICT and the standby setting that avoids it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { cleanEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { waitUntil } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const KEY = "standby-conflicts-key-2b7a";
const PRODUCTS = 2000;
const RANGES = ["2026-01-01&month_to=2026-01-31", "2026-01-05&month_to=2026-02-20", "2026-02-01&month_to=2026-02-28"];

describeWithPostgres("a hot standby that cancels reads to replay the primary's vacuum", () => {
  let primary: Cluster;
  let standby: Cluster;
  let server: RunningBinary;
  let writer: postgres.Sql;

  beforeAll(async () => {
    primary = await createCluster();
    primary.start();
    const bin = isolatedBinary();
    const migrated = Bun.spawnSync([bin.path, "migrate"], { env: cleanEnv({ DATABASE_URL: primary.url() }), stdout: "pipe", stderr: "pipe" });
    expect(migrated.exitCode).toBe(0);
    writer = postgres(primary.url(), { max: 1, onnotice: () => {} });
    await writer.unsafe(`
      insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
      select p, 900000 + p, 'SKU-' || p, 'Product ' || p, false from generate_series(1, ${PRODUCTS}) p;
      insert into product_daily_costs
      select p, date '2026-01-01' + d, p % 97, 1, 2, 3 from generate_series(1, ${PRODUCTS}) p, generate_series(0, 58) d`);
    const refreshed = Bun.spawnSync([bin.path, "refresh"], { env: cleanEnv({ DATABASE_URL: primary.url() }), stdout: "pipe", stderr: "pipe" });
    expect(refreshed.exitCode).toBe(0);
    // Cancel at once whatever stands in the way of replay, and tell the primary nothing.
    standby = await createCluster({ standbyOf: primary, settings: { max_standby_streaming_delay: "0", hot_standby_feedback: "off" } });
    standby.start();
    const replica = postgres(standby.url(), { max: 1, onnotice: () => {} });
    await waitUntil("the standby has the rows", async () => (await replica`select count(*)::int as n from product_daily_costs`)[0]!.n === PRODUCTS * 59);
    await replica.end();
    server = await startBinary(bin.path, { DATABASE_URL: standby.url(), PRODUCT_COST_API_KEYS: KEY, ANSWER_CACHE_MB: "0" }, [], bin.dir);
  }, 120_000);

  afterAll(async () => {
    await server?.stop("SIGKILL");
    await writer?.end({ timeout: 1 });
    standby?.destroy();
    primary?.destroy();
  }, 60_000);

  test("every read is a whole 200 or a clean 503 naming RECOVERY_CONFLICT, never a 500 or a cut transfer", async () => {
    let stop = false;
    // The primary rewrites a day's rows and vacuums them away, over and over.
    const writing = (async () => {
      for (let day = 0; !stop; day = (day + 1) % 59) {
        await writer.unsafe(`update product_daily_costs set warehouse_fees_usd = warehouse_fees_usd + 1 where cost_date = date '2026-01-01' + ${day}`);
        await writer.unsafe("vacuum product_daily_costs");
      }
    })();
    const outcomes: { status: number; rows?: number; body: string }[] = [];
    const reader = async (n: number) => {
      for (let i = n; !stop; i++) {
        try {
          const res = await fetch(`${server.url}/external/v1/product-costs?month_from=${RANGES[i % RANGES.length]}&segment=all`, { headers: { authorization: `Bearer ${KEY}` } });
          const body = await res.text();
          outcomes.push({ status: res.status, body: res.status === 200 ? "" : body, ...(res.status === 200 ? { rows: (JSON.parse(body) as unknown[]).length } : {}) });
        } catch (err) {
          outcomes.push({ status: -1, body: String(err) });
        }
      }
    };
    const readers = Array.from({ length: 4 }, (_, n) => reader(n));
    const lines = () => server.lines.filter((l) => l.msg === "request");
    const conflicts = () => lines().filter((l) => l.retried_after === "40001" || l.retried_after === "40P01" || l.problem === "RECOVERY_CONFLICT");
    const started = Date.now();
    await waitUntil("reads that met a recovery conflict", () => conflicts().length >= 3 || Date.now() - started > 20_000, 30_000);
    stop = true;
    await Promise.all([writing, ...readers]);

    const wrong = outcomes.filter((o) => !(o.status === 200 && o.rows === PRODUCTS) && !(o.status === 503 && o.body === '{"detail":"DATABASE_UNAVAILABLE"}'));
    // On failure, show what the server itself said: its exit code, its lines other than
    // requests, and its stderr (a read cut by the server's death looks like ECONNRESET here).
    const server_said = wrong.length ? { exit: server.proc.exitCode, lines: server.lines.filter((l) => l.msg !== "request").slice(-20), stderr: server.stderr().slice(-4000) } : {};
    expect({ wrong: wrong.slice(0, 5), server_said }).toEqual({ wrong: [], server_said: {} });
    expect(lines().filter((l) => typeof l.status === "number" && l.status >= 500 && l.status !== 503)).toEqual([]);
    // The test met what it is about: the standby did cancel reads.
    expect(conflicts().length).toBeGreaterThanOrEqual(3);
    // A 503 of a conflict says which, and what to set on the standby.
    for (const line of lines().filter((l) => l.problem === "RECOVERY_CONFLICT")) {
      expect(line).toMatchObject({ status: 503, error_code: "40001", fix: expect.stringContaining("hot_standby_feedback = on") });
    }
    console.log(JSON.stringify({ reads: outcomes.length, ok: outcomes.filter((o) => o.status === 200).length, retried: lines().filter((l) => l.retried_after).length, unavailable: outcomes.filter((o) => o.status === 503).length }));
  }, 60_000);
});
