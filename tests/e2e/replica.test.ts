// Reads from a replica, with the first host down: a throwaway primary and a hot standby made
// from it by pg_basebackup. A multi-host DATABASE_URL picks the session target_session_attrs
// asks for, and the executable serves exact rows from the standby, where every session is
// read-only anyway.

import { afterAll, beforeAll, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/db/client.ts";
import { JANUARY_NORMAL, DAILY, PRODUCTS } from "../http/fixture.ts";
import { cleanEnv, isolatedBinary, startBinary } from "../support/binary.ts";
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
});
