// Reads from a replica, with the first host down: a throwaway primary and a hot standby made
// from it by pg_basebackup. A multi-host DATABASE_URL picks the session target_session_attrs
// asks for, and the executable serves exact rows from the standby, where every session is
// read-only anyway.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { JANUARY_NORMAL, DAILY, PRODUCTS } from "../http/fixture.ts";
import { cleanEnv, isolatedBinary, startBinary } from "../support/binary.ts";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { testApp } from "../support/app.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { loadFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { unusedPort } from "../support/ports.ts";

const KEY = "replica-test-key-7d2c";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";

describeWithPostgres("a primary and its hot standby", () => {
  let primary: Cluster;
  let standby: Cluster;
  const pools: Sql[] = [];

  beforeAll(async () => {
    primary = await createCluster();
    primary.start();
    const bin = isolatedBinary();
    const migrate = Bun.spawnSync([bin.path, "migrate"], { env: cleanEnv({ DATABASE_URL: primary.url() }), stdout: "pipe", stderr: "pipe" });
    expect([migrate.exitCode, migrate.stderr.toString()]).toEqual([0, ""]);
    const admin = postgres(primary.url(), { max: 1, onnotice: () => {} });
    await loadFixture(admin as never, PRODUCTS, DAILY);
    await admin.end();
    standby = await createCluster({ standbyOf: primary });
    standby.start();
    // Replayed up to the primary's position: the standby has the fixture.
    const replica = postgres(standby.url(), { max: 1, onnotice: () => {} });
    for (let i = 0; i < 100; i++) {
      const [row] = await replica<{ n: number }[]>`select count(*)::int as n from product_daily_costs`;
      if (row!.n === DAILY.length) break;
      await Bun.sleep(50);
    }
    await replica.end();
  }, 120_000);
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end({ timeout: 2 })));
    standby?.destroy();
    primary?.destroy();
  });

  async function inRecovery(hosts: number[], attrs: string): Promise<boolean> {
    const url = `postgres://postgres@${hosts.map((p) => `127.0.0.1:${p}`).join(",")}/postgres?target_session_attrs=${attrs}`;
    const sql = createPool({ url, max: 1, connectTimeoutMs: 3000, statementTimeoutMs: 5000, readOnly: true, applicationName: "pce-replica-test" });
    pools.push(sql);
    const [row] = await sql<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
    return row!.standby;
  }

  // (read-write is refused for serve at start: its sessions are read-only, so none would match; see config.ts.)
  test("target_session_attrs picks the standby or the primary, whatever the order, past a host that is down", async () => {
    const down = unusedPort();
expect(await inRecovery([down, primary.port, standby.port], "prefer-standby")).toBe(true);
    expect(await inRecovery([down, primary.port, standby.port], "standby")).toBe(true);
    expect(await inRecovery([down, standby.port, primary.port], "primary")).toBe(false);
    // prefer-standby falls back to the primary when no standby answers.
    expect(await inRecovery([down, primary.port], "prefer-standby")).toBe(false);
  });

  test("the executable serves exact rows from the standby, the first host being down", async () => {
    const bin = isolatedBinary();
    const url = `postgres://postgres@127.0.0.1:${unusedPort()},127.0.0.1:${standby.port}/postgres?target_session_attrs=standby`;
    const server = await startBinary(bin.path, { DATABASE_URL: url, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    try {
      const ready = await fetch(`${server.url}/readyz`);
      expect([ready.status, await ready.text()]).toEqual([200, '{"detail":"READY"}']);
      const res = await fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}` } });
      expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  // Issue 52, item 2: postgres.js moved a pool slot to the next host at every reconnect, so a
  // pool of primary,standby held sessions on both; the version was read on one and the rows on
  // the other, and answers read after a write were the standby's older rows under the newer
  // ETag. Now each session tries the hosts in order, as libpq does (all on the primary while it
  // answers), and an answer's version and rows are read in one snapshot of one session anyway.
  test("a primary and a standby 2 s behind in one URL: after sessions are ended, every session is the primary's and every answer is current", async () => {
    const lagging = await createCluster({ standbyOf: primary, settings: { recovery_min_apply_delay: "2s" } });
    lagging.start();
    const name = `pce-two-hosts-${process.pid}`;
    const url = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${lagging.port}/postgres`;
    const reader = createPool({ url, max: 4, connectTimeoutMs: 3000, statementTimeoutMs: 10_000, readOnly: true, applicationName: name });
    pools.push(reader);
    const admin = postgres(primary.url(), { max: 1, onnotice: () => {} });
    const onStandby = postgres(lagging.url(), { max: 1, onnotice: () => {} });
    try {
      const app = testApp(reader, { answerCache: createAnswerCache(16 * 2 ** 20) });
      const get = async () => {
        const res = await app.get(JAN);
        return { status: res.status, etag: res.headers.get("etag"), body: await res.text() };
      };
      // Product 1's purchase cost in January, as the primary's GROUP BY has it and as an answer says it.
      const naive = async () => (await admin.unsafe<{ s: string }[]>(`select trim_scale(sum(purchase_cost_usd))::text as s from product_daily_costs where product_id = 1 and cost_date between '2024-01-01' and '2024-01-31'`))[0]!.s;
      const answered = (body: string) => /"erp_product_id":1001,[^}]*"purchase_cost_usd":([^,]+),/.exec(body)?.[1];
      const bodies = new Map<string, string>(); // ETag -> the one body it stands for
      const wrong: string[] = [];
      for (let round = 0; round < 6; round++) {
        // Some of the pool's sessions ended (a restart, a failover, an idle timeout): they connect again.
        await Promise.all(Array.from({ length: 8 }, () => get()));
        // (Idle ones: a session ended while it starts is a host that failed, and the next host is tried, as libpq does.)
        await admin`select pg_terminate_backend(pid) from pg_stat_activity where split_part(application_name, ' ', 1) = ${name} and state = 'idle'`;
        await admin`update product_daily_costs set purchase_cost_usd = purchase_cost_usd + 1 where product_id = 1 and cost_date = '2024-01-01'`;
        const want = await naive();
        const answers = await Promise.all(Array.from({ length: 8 }, () => get().catch(() => get())));
        for (const a of answers) {
          if (a.status !== 200) continue; // the sessions ended above: a 503 at most, never a stale 200
          if (answered(a.body) !== want) wrong.push(`round ${round}: ${answered(a.body)}, not ${want}`);
          if (bodies.has(a.etag!) && bodies.get(a.etag!) !== a.body) wrong.push(`round ${round}: ${a.etag} stands for two bodies`);
          bodies.set(a.etag!, a.body);
        }
      }
      expect(wrong).toEqual([]);
      // Every session of the pool is the primary's; none is the standby's.
      const [row] = await onStandby<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where split_part(application_name, ' ', 1) = ${name}`;
      expect(row!.n).toBe(0);
    } finally {
      await Promise.all([admin.end(), onStandby.end()]);
      lagging.destroy();
    }
  }, 120_000);
});
