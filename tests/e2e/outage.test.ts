// Database outages, for real: a throwaway PostgreSQL cluster that the test stops, starts
// and restarts under load, and peers that misbehave at the TCP level, against the compiled
// executable. The service must start without its database, answer 503 quickly while it is
// gone, recover by itself, and never crash, hang or serve a partial answer.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import postgres from "postgres";
import { createPool } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "../http/fixture.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { waitUntil } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";

const KEY = "outage-e2e-key-3c9d";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const UNAVAILABLE = '{"detail":"DATABASE_UNAVAILABLE"}';
const CONNECT_TIMEOUT_MS = 2000;

let cluster: Cluster;
let bin: { dir: string; path: string };
const running: RunningBinary[] = [];

async function start(databaseUrl: string): Promise<RunningBinary> {
  const server = await startBinary(
    bin.path,
    { DATABASE_URL: databaseUrl, PRODUCT_COST_API_KEYS: KEY, DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS), DB_POOL_MAX: "4" },
    [],
    bin.dir,
  );
  running.push(server);
  return server;
}

async function call(server: RunningBinary, path = JAN) {
  const started = performance.now();
  const res = await fetch(server.url + path, { headers: { authorization: `Bearer ${KEY}` } });
  return { status: res.status, body: await res.text(), ms: performance.now() - started };
}

// A throwaway cluster needs PostgreSQL's own programs (initdb, pg_ctl): reported as skipped
// where PostgreSQL is not installed.
describeWithPostgres("outages of a real PostgreSQL", () => {
beforeAll(async () => {
  bin = isolatedBinary();
  cluster = await createCluster();
  cluster.start();
  const server = postgres(cluster.url(), { max: 1, onnotice: () => {} });
  await server`create database pce`;
  await server.end();
  const admin = createPool({ url: cluster.url("pce"), max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 0, readOnly: false, applicationName: "pce-outage-setup" });
  await migrate(admin);
  await loadFixture(admin, PRODUCTS, DAILY);
  await admin.end();
  cluster.stop();
}, 120_000);

afterAll(async () => {
  for (const server of running) await server.stop("SIGKILL");
  cluster?.destroy();
}, 60_000);

describe("PostgreSQL down, up, restarted", () => {
  let server: RunningBinary;

  test("starts while PostgreSQL is down: readyz 503, requests 503 DATABASE_UNAVAILABLE within the connect timeout", async () => {
    server = await start(cluster.url("pce"));
    const ready = await fetch(server.url + "/readyz");
    expect({ status: ready.status, body: await ready.json() }).toEqual({
      status: 503,
      body: {
        detail: "DATABASE_UNAVAILABLE",
        cause: "PostgreSQL cannot be reached or did not answer in time",
        fix: "check that PostgreSQL is running and reachable at the host and port of DATABASE_URL",
      },
    });
    for (let i = 0; i < 3; i++) {
      const r = await call(server);
      expect({ status: r.status, body: r.body }).toEqual({ status: 503, body: UNAVAILABLE });
      expect(r.ms).toBeLessThan(CONNECT_TIMEOUT_MS + 3000);
    }
  }, 60_000);

  test("recovers by itself when PostgreSQL comes back, without a restart", async () => {
    const pid = server.proc.pid;
    cluster.start();
    await waitUntil("the service answers 200 again", async () => (await call(server)).status === 200, 20_000);
    expect(await call(server)).toMatchObject({ status: 200, body: JANUARY_NORMAL });
    expect((await fetch(server.url + "/readyz")).status).toBe(200);
    expect(server.proc.pid).toBe(pid);
    expect(server.proc.exitCode).toBeNull();
  }, 60_000);

  test("a restart under load fails only requests in flight during the outage; no crash, no stuck pool", async () => {
    if (!server) {
      // Run alone (`-t`): the tests before it did not leave a server up with its database.
      cluster.start();
      server = await start(cluster.url("pce"));
      await waitUntil("the service answers 200", async () => (await call(server)).status === 200, 20_000);
    }
    type Result = { started: number; ended: number; status: number; body: string };
    const results: Result[] = [];
    let stop = false;
    const worker = async () => {
      while (!stop) {
        const started = performance.now();
        try {
          const r = await call(server);
          results.push({ started, ended: performance.now(), status: r.status, body: r.body });
        } catch (err) {
          results.push({ started, ended: performance.now(), status: -1, body: String(err) });
        }
      }
    };
    const workers = Array.from({ length: 6 }, worker);
    await waitUntil("answers before the restart", () => results.filter((r) => r.status === 200).length >= 12);
    const downAt = performance.now();
    cluster.restart("fast"); // terminates every session (57P01), then comes back
    const upAt = performance.now();
    // Recovery is the guard's probe (at most 2 s apart) and the pool's reconnect (at most 1 s
    // backoff); generous for a loaded machine. Requests started after it must all succeed.
    const SETTLE_MS = 4000;
    await waitUntil("answers after the restart has settled", () => results.filter((r) => r.started > upAt + SETTLE_MS).length >= 12, 30_000);
    stop = true;
    await Promise.all(workers);

    // Every request that got something else than it should, with what it got and when
    // (milliseconds from the restart's start): the failure says what a client saw.
    const counts = { before: 0, during: 0, after: 0, errorsDuring: 0 };
    const offending: { started_ms: number; ended_ms: number; status: number; body: string; expected: string }[] = [];
    const offend = (r: Result, expected: string) =>
      offending.push({ started_ms: Math.round(r.started - downAt), ended_ms: Math.round(r.ended - downAt), status: r.status, body: r.body.slice(0, 300), expected });
    for (const r of results) {
      const ok = r.status === 200 && r.body === JANUARY_NORMAL;
      const clean503 = r.status === 503 && r.body === UNAVAILABLE;
      if (!ok && !clean503) offend(r, "a 200 with the right body or a clean 503 (never a 500, a partial body or a broken connection)");
      if (r.ended < downAt) {
        counts.before++;
        if (!ok && clean503) offend(r, "200: it ended before the restart");
      } else if (r.started > upAt + SETTLE_MS) {
        counts.after++;
        if (!ok && clean503) offend(r, `200: it started ${SETTLE_MS} ms after the restart was over (${Math.round(upAt - downAt)} ms)`);
      } else {
        counts.during++;
        if (!ok) counts.errorsDuring++;
      }
    }
    // And the service's own account of any 5xx but a 503: its log line names the cause.
    const serverErrors = server.lines.filter((line) => typeof line.status === "number" && line.status >= 500 && line.status !== 503);
    expect({ offending: offending.slice(0, 10), count: offending.length, serverErrors: serverErrors.slice(0, 5) }).toEqual({ offending: [], count: 0, serverErrors: [] });
    console.log(JSON.stringify({ restart_under_load: counts }));
    expect(counts.before).toBeGreaterThan(0);
    expect(counts.after).toBeGreaterThan(0);

    // No stuck pool: a burst larger than the pool is served whole.
    const burst = await Promise.all(Array.from({ length: 20 }, () => call(server)));
    expect(burst.filter((r) => r.status !== 200 || r.body !== JANUARY_NORMAL).map((r) => ({ status: r.status, body: r.body.slice(0, 300) }))).toEqual([]);
    expect(server.proc.exitCode).toBeNull();
  }, 90_000);
});

describe("peers that break the protocol", () => {
  test("a peer that accepts and drops every connection, and one that never speaks: 503 within the connect timeout", async () => {
    const dropper = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void s.end(), data() {} } });
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    try {
      for (const peer of [dropper, silent]) {
        const server = await start(`postgres://postgres@127.0.0.1:${peer.port}/pce`);
        for (let i = 0; i < 2; i++) {
          const r = await call(server);
          expect({ status: r.status, body: r.body }).toEqual({ status: 503, body: UNAVAILABLE });
          expect(r.ms).toBeLessThan(CONNECT_TIMEOUT_MS + 3000);
        }
        expect((await fetch(server.url + "/readyz")).status).toBe(503);
        expect((await fetch(server.url + "/healthz")).status).toBe(200);
        expect(server.proc.exitCode).toBeNull();
        await server.stop("SIGKILL");
      }
    } finally {
      dropper.stop(true);
      silent.stop(true);
    }
  }, 60_000);

  test("migrate and refresh against a peer that never speaks: exit 1 within DB_CONNECT_TIMEOUT_MS, never a hang", async () => {
    // Nothing else bounds these commands (no request deadline, no guard): only the connect timeout.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const { path } = isolatedBinary();
    try {
      for (const command of ["migrate", "refresh"]) {
        const started = performance.now();
        const r = Bun.spawnSync([path, command], {
          env: { PATH: "/usr/bin:/bin", DATABASE_URL: `postgres://postgres@127.0.0.1:${silent.port}/pce`, DB_CONNECT_TIMEOUT_MS: "500" },
          stdout: "pipe",
          stderr: "pipe",
          timeout: 20_000,
        });
        expect({ command, code: r.exitCode, fast: performance.now() - started < 5000 }).toEqual({ command, code: 1, fast: true });
      }
    } finally {
      silent.stop(true);
    }
  }, 60_000);
});
});
