// Soak: mixed load against the compiled executable for SOAK_SECONDS (default 600) with a
// PostgreSQL restart in the middle, on a throwaway cluster on 127.0.0.1 that it creates
// and removes. Reports requests served, answers by status, 5xx outside the outage window,
// latency, and the executable's RSS at start (after warm-up), middle and end.
// Not part of the test suite:   bun run soak      (SOAK_SECONDS=60 bun run soak for a short run)
// Exit code 1 when a target is missed: any 5xx outside the outage window, RSS growth >= 10%.

import postgres from "postgres";
import { createPool } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { rssMb } from "../support/faults.ts";

const SECONDS = Number(process.env.SOAK_SECONDS ?? 600);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 4);
const PRODUCTS = Number(process.env.SOAK_PRODUCTS ?? 3000);
const DAYS = 120; // 2024-01-01 .. 2024-04-29
const WARMUP_SECONDS = Math.min(30, SECONDS / 10);
const KEY = "soak-key-4f0b8e1d";
// Counted as the outage: from the restart command to this long after the database is back.
const RECOVERY_GRACE_MS = 5000;

interface Kind {
  name: string;
  path: string;
  headers?: Record<string, string>;
  method?: string;
  weight: number;
}

const P = "/external/v1/product-costs";
const KINDS: Kind[] = [
  { name: "one day", path: `${P}?month_from=2024-02-10&month_to=2024-02-10`, weight: 30 },
  { name: "one month", path: `${P}?month_from=2024-03-01&month_to=2024-03-31&segment=all`, weight: 20 },
  { name: "odd range", path: `${P}?month_from=2024-01-17&month_to=2024-04-03`, weight: 10 },
  { name: "whole data, gzip", path: `${P}?month_from=2024-01-01&month_to=2024-12-31&segment=all`, headers: { "accept-encoding": "gzip" }, weight: 5 },
  { name: "csv", path: `${P}?month_from=2024-02-01&month_to=2024-02-29`, headers: { accept: "text/csv" }, weight: 5 },
  { name: "samples", path: `${P}?month_from=2024-01-01&month_to=2024-04-29&segment=sample`, weight: 5 },
  { name: "422", path: `${P}?month_from=2024-02-30&month_to=x`, weight: 8 },
  { name: "400", path: `${P}?month_from=2024-03-01&month_to=2024-02-01`, weight: 4 },
  { name: "401", path: `${P}?month_from=2024-02-01&month_to=2024-02-02`, headers: { authorization: "Bearer not-a-key" }, weight: 8 },
  { name: "head", path: `${P}?month_from=2024-02-01&month_to=2024-02-02`, method: "HEAD", weight: 2 },
  { name: "readyz", path: "/readyz", weight: 3 },
];
const TOTAL_WEIGHT = KINDS.reduce((n, k) => n + k.weight, 0);
const pick = (): Kind => {
  let r = Math.random() * TOTAL_WEIGHT;
  for (const k of KINDS) if ((r -= k.weight) < 0) return k;
  return KINDS[0]!;
};

async function loadData(cluster: Cluster): Promise<void> {
  const server = postgres(cluster.url(), { max: 1, onnotice: () => {} });
  await server`create database pce`;
  await server.end();
  const sql = createPool({ url: cluster.url("pce"), max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 0, readOnly: false, applicationName: "soak-setup" });
  await migrate(sql);
  await sql`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
            select g, 50000 + g, 'SOAK-' || lpad(g::text, 6, '0'), 'Soak product ' || g, g % 10 = 0
            from generate_series(1, ${PRODUCTS}::bigint) g`;
  await sql`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd)
            select p, date '2024-01-01' + d, round((p * 7 + d) % 1000 / 7.0, 6), (p + d) % 13, case when d % 5 = 0 then null else 1.25 end, 0
            from generate_series(1, ${PRODUCTS}::bigint) p, generate_series(0, ${DAYS - 1}) d`;
  await sql`analyze`;
  await sql.end();
}

function percentile(sorted: number[], p: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]! : 0;
}

async function main(): Promise<number> {
  const t0 = performance.now();
  const log = (msg: string) => console.error(`[soak ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)}s] ${msg}`);
  let cluster: Cluster | undefined;
  let server: RunningBinary | undefined;
  const cleanup = async () => {
    if (server && server.proc.exitCode === null) await server.stop();
    cluster?.destroy();
  };
  process.on("SIGINT", () => void cleanup().then(() => process.exit(130)));
  try {
    cluster = await createCluster();
    cluster.start();
    log(`cluster on 127.0.0.1:${cluster.port}; loading ${PRODUCTS} products x ${DAYS} days`);
    await loadData(cluster);
    const bin = isolatedBinary();
    server = await startBinary(bin.path, { DATABASE_URL: cluster.url("pce"), PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    const pid = server.proc.pid;
    log(`executable pid ${pid} at ${server.url}; ${WORKERS} workers for ${SECONDS} s, restart at ${SECONDS / 2} s`);

    const started = performance.now();
    const endAt = started + SECONDS * 1000;
    const byStatus = new Map<string, number>();
    const byKind = new Map<string, Map<string, number>>();
    const latencies: number[] = [];
    const failures: { at: number; kind: string; status: string; detail: string }[] = [];
    const rss = { start: 0, middle: 0, end: 0, max: 0 };
    let outage: { from: number; to: number } | undefined;
    let served = 0;

    const worker = async () => {
      while (performance.now() < endAt) {
        const kind = pick();
        const at = performance.now();
        let status: string;
        let detail = "";
        try {
          const res = await fetch(server!.url + kind.path, {
            method: kind.method ?? "GET",
            headers: { authorization: `Bearer ${KEY}`, ...kind.headers },
            signal: AbortSignal.timeout(120_000),
          });
          const body = await res.text(); // a broken transfer throws here
          status = String(res.status);
          if (res.status >= 500) detail = body.slice(0, 100);
        } catch (err) {
          status = "broken";
          detail = (err as Error).message.slice(0, 100);
        }
        const ms = performance.now() - at;
        latencies.push(ms);
        served++;
        byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
        const k = byKind.get(kind.name) ?? new Map<string, number>();
        k.set(status, (k.get(status) ?? 0) + 1);
        byKind.set(kind.name, k);
        if (status === "broken" || Number(status) >= 500) failures.push({ at, kind: kind.name, status, detail });
      }
    };

    const sampler = (async () => {
      while (performance.now() < endAt) {
        await Bun.sleep(1000);
        if (server!.proc.exitCode !== null) throw new Error(`the executable exited with ${server!.proc.exitCode}`);
        server!.lines.length = 0; // one log line per request: do not keep them all
        const now = rssMb(pid);
        rss.max = Math.max(rss.max, now);
        const elapsed = (performance.now() - started) / 1000;
        if (!rss.start && elapsed >= WARMUP_SECONDS) rss.start = now;
        if (!rss.middle && elapsed >= SECONDS / 2 - 1) rss.middle = now;
        if (Math.round(elapsed) % 60 === 0) log(`${served} requests, RSS ${now.toFixed(1)} MiB`);
      }
    })();

    const restarter = (async () => {
      await Bun.sleep(SECONDS * 500);
      log("restarting PostgreSQL (pg_ctl restart -m fast)");
      const from = performance.now();
      cluster!.restart("fast");
      outage = { from, to: performance.now() };
      log(`PostgreSQL back after ${(outage.to - from).toFixed(0)} ms`);
    })();

    await Promise.all([...Array.from({ length: WORKERS }, worker), sampler, restarter]);
    rss.end = rssMb(pid);
    const alive = server.proc.exitCode === null;

    const window = outage ? { from: outage.from - 1000, to: outage.to + RECOVERY_GRACE_MS } : { from: 0, to: 0 };
    const outside = failures.filter((f) => f.at < window.from || f.at > window.to);
    latencies.sort((a, b) => a - b);
    const growth = rss.start ? ((rss.end - rss.start) / rss.start) * 100 : 0;
    const report = {
      seconds: SECONDS,
      workers: WORKERS,
      data: `${PRODUCTS} products x ${DAYS} days`,
      requests_served: served,
      requests_per_second: Math.round(served / SECONDS),
      by_status: Object.fromEntries([...byStatus].sort()),
      by_kind: Object.fromEntries([...byKind].map(([k, v]) => [k, Object.fromEntries(v)])),
      outage_ms: outage ? Math.round(outage.to - outage.from) : null,
      errors_in_outage_window: failures.length - outside.length,
      errors_5xx_or_broken_outside_outage: outside.length,
      first_errors_outside: outside.slice(0, 5).map((f) => ({ ...f, at_s: Math.round((f.at - started) / 1000) })),
      latency_ms: { p50: Math.round(percentile(latencies, 0.5)), p99: Math.round(percentile(latencies, 0.99)), max: Math.round(latencies.at(-1) ?? 0) },
      rss_mib: { start: +rss.start.toFixed(1), middle: +rss.middle.toFixed(1), end: +rss.end.toFixed(1), max: +rss.max.toFixed(1), growth_percent: +growth.toFixed(1) },
      process_alive: alive,
    };
    console.log(JSON.stringify(report, null, 2));
    const ok = alive && outside.length === 0 && growth < 10;
    log(ok ? "targets met" : "TARGET MISSED");
    return ok ? 0 : 1;
  } finally {
    await cleanup();
  }
}

process.exit(await main());
