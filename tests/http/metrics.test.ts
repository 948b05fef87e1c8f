// GET /metrics in process, over real databases: exact Prometheus lines for requests by
// route template and status, latency, rows served, the pool and database errors; nothing
// secret in any label; no /metrics at all when disabled.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { loadConfig } from "../support/config.ts";
import { createPool } from "../../src/database/client.ts";
import { REFRESH_LOCK_ID, refreshRollup } from "../../src/rollup/refresh.ts";
import { createServiceMetrics, DURATION_BUCKETS, type ServiceMetrics } from "../../src/service/service-metrics.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, noDatabase, ring, testApp, type TestApp } from "../support/app.ts";
import { waitUntil } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const P = "product_cost_export_";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";

/** The HELP, TYPE and sample lines of one metric family, as scraped. */
function family(text: string, name: string): string[] {
  const own = new Set([name, `${name}_bucket`, `${name}_sum`, `${name}_count`]);
  return text.split("\n").filter((l) => l.startsWith(`# HELP ${name} `) || l.startsWith(`# TYPE ${name} `) || own.has(l.split(/[{ ]/)[0]!));
}

function samples(text: string, name: string): string[] {
  return family(text, name).filter((l) => !l.startsWith("#"));
}

async function scrape(app: TestApp): Promise<{ status: number; type: string | null; text: string }> {
  await Bun.sleep(0); // requests are recorded once their body is done, in a microtask: let those run
  const res = await app.get("/metrics", {});
  return { status: res.status, type: res.headers.get("content-type"), text: await res.text() };
}

describeBackends("metrics on $name", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
  });
  afterAll(async () => {
    await db.close();
  });

  const fresh = (options: Parameters<typeof testApp>[1] = {}): [TestApp, ServiceMetrics] => {
    const metrics = createServiceMetrics({ version: "1.2.3", commit: "abc123" });
    return [testApp(db.service, { ...options, metrics }), metrics];
  };

  test("/metrics is Prometheus text, needs no key, and declares every family from the start", async () => {
    const [app] = fresh();
    const { status, type, text } = await scrape(app);
    expect({ status, type }).toEqual({ status: 200, type: "text/plain; version=0.0.4; charset=utf-8" });
    expect(text.split("\n").filter((l) => l.startsWith("# TYPE "))).toEqual([
      `# TYPE ${P}http_requests_total counter`,
      `# TYPE ${P}http_request_duration_seconds histogram`,
      `# TYPE ${P}requests_by_key_total counter`,
      `# TYPE ${P}rows_served_total counter`,
      `# TYPE ${P}database_errors_total counter`,
      `# TYPE ${P}responses_cut_short_total counter`,
      `# TYPE ${P}request_timeouts_total counter`,
      `# TYPE ${P}database_pool_connections gauge`,
      `# TYPE ${P}database_pool_max gauge`,
      `# TYPE ${P}database_pool_waiting gauge`,
      `# TYPE ${P}rollup_changes_waiting gauge`,
      `# TYPE ${P}rollup_last_refresh_age_seconds gauge`,
      `# TYPE ${P}rollup_last_refresh_duration_seconds gauge`,
      `# TYPE ${P}rollup_refresh_running_seconds gauge`,
      `# TYPE ${P}rollup_refresh_failing gauge`,
      `# TYPE ${P}ready gauge`,
      `# TYPE ${P}not_ready gauge`,
      `# TYPE ${P}read_source gauge`,
      `# TYPE ${P}answer_cache_hits_total counter`,
      `# TYPE ${P}answer_cache_misses_total counter`,
      `# TYPE ${P}answer_cache_evictions_total counter`,
      `# TYPE ${P}answer_cache_bytes gauge`,
      `# TYPE ${P}answer_cache_entries gauge`,
      `# TYPE ${P}edge_cache_bytes gauge`,
      `# TYPE ${P}edge_cache_limit_bytes gauge`,
      `# TYPE ${P}edge_cache_edges gauge`,
      `# TYPE ${P}edge_cache_hits_total counter`,
      `# TYPE ${P}edge_cache_misses_total counter`,
      `# TYPE ${P}edge_cache_catalogue_reads_total counter`,
      `# TYPE ${P}edge_cache_ranges_waiting gauge`,
      `# TYPE ${P}tls_certificate_expiry_timestamp_seconds gauge`,
      `# TYPE ${P}api_keys gauge`,
      `# TYPE ${P}api_key_nearest_expiry_timestamp_seconds gauge`,
      `# TYPE ${P}build_info gauge`,
      "# TYPE process_start_time_seconds gauge",
      "# TYPE process_resident_memory_bytes gauge",
      "# TYPE process_cpu_seconds_total counter",
    ]);
    expect(samples(text, `${P}build_info`)).toEqual([`${P}build_info{version="1.2.3",commit="abc123"} 1`]);
    expect(samples(text, `${P}rows_served_total`)).toEqual([`${P}rows_served_total{format="arrow"} 0`, `${P}rows_served_total{format="csv"} 0`, `${P}rows_served_total{format="json"} 0`]);
    expect(samples(text, `${P}request_timeouts_total`)).toEqual([`${P}request_timeouts_total 0`]);
    expect(text.endsWith("\n")).toBe(true);
  });

  test("the edge store: a range's first read is its statement's, its two edges and the catalogue are then read in the background, the same range again finds them held; bytes within EDGE_CACHE_MB", async () => {
    const [app] = fresh();
    await refreshRollup(db.admin);
    const edges = async () => {
      const { text } = await scrape(app);
      return ["bytes", "limit_bytes", "edges", "hits_total", "misses_total", "catalogue_reads_total", "ranges_waiting"].map((name) => Number(samples(text, `${P}edge_cache_${name}`)[0]!.split(" ")[1]));
    };
    expect(await edges()).toEqual([0, 128 * 2 ** 20, 0, 0, 0, 0, 0]);
    const range = "/external/v1/product-costs?month_from=2024-01-10&month_to=2024-02-20";
    const first = await app.get(range);
    expect(first.status).toBe(200);
    const body = await first.text();
    // Kept by the warmer once the service is idle: within a few polls.
    for (let i = 0; i < 200 && (await edges())[6]! > 0; i++) await Bun.sleep(10);
    const [bytes, limit, held, hits, misses, catalogues, waiting] = await edges();
    expect({ held, hits, misses, catalogues, waiting }).toEqual({ held: 2, hits: 0, misses: 2, catalogues: 1, waiting: 0 });
    expect(bytes).toBeGreaterThan(0);
    expect(bytes).toBeLessThanOrEqual(limit!);
    const again = await app.get(range);
    expect(await again.text()).toBe(body);
    expect((await edges()).slice(2)).toEqual([2, 2, 2, 1, 0]);
  });

  test("readiness at each scrape, with no request: ready 1; with no key, 0 and not_ready naming EXTERNAL_API_NOT_CONFIGURED, as /readyz", async () => {
    const [app] = fresh();
    const ready = await scrape(app);
    expect([samples(ready.text, `${P}ready`), samples(ready.text, `${P}not_ready`)]).toEqual([[`${P}ready 1`], []]);
    const [keyless] = fresh({ keys: ring() });
    const notReady = await scrape(keyless);
    expect([samples(notReady.text, `${P}ready`), samples(notReady.text, `${P}not_ready`)]).toEqual([[`${P}ready 0`], [`${P}not_ready{problem="EXTERNAL_API_NOT_CONFIGURED"} 1`]]);
    expect((await keyless.get("/readyz")).status).toBe(503);
  });

  test("the rollup's lag: changes waiting move with writes and return to 0 after a refresh; its age is the last refresh's; /readyz names a large lag", async () => {
    const [app] = fresh();
    await refreshRollup(db.admin);
    const lag = async () => {
      const { text } = await scrape(app);
      const age = samples(text, `${P}rollup_last_refresh_age_seconds`).map((l) => Number(l.split(" ")[1]));
      return { waiting: samples(text, `${P}rollup_changes_waiting`), age };
    };
    const folded = await lag();
    expect(folded.waiting).toEqual([`${P}rollup_changes_waiting 0`]);
    expect(folded.age.length).toBe(1);
    expect(folded.age[0]!).toBeGreaterThanOrEqual(0);
    expect(folded.age[0]!).toBeLessThan(60);

    // Two statements, three (product, month) pairs: three notes.
    await db.admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd) values (6, '2024-05-01', 1), (7, '2024-06-01', 2)`;
    await db.admin`update product_daily_costs set purchase_cost_usd = 2 where product_id = 1 and cost_date = '2024-01-01'`;
    expect((await lag()).waiting).toEqual([`${P}rollup_changes_waiting 3`]);
    // Ready and saying nothing of a lag that the next refresh will fold.
    expect(await (await app.get("/readyz", {})).text()).toBe(`{"detail":"READY"}`);

    // The timer stopped ten minutes ago: still ready (answers are exact), and it says so.
    await db.admin`update product_cost_refreshes set finished_at = now() - interval '10 minutes'`;
    const stalled = await app.get("/readyz", {});
    const body = (await stalled.json()) as { detail: string; rollup: { changes_waiting: number; last_refresh_age_seconds: number; warning: string } };
    expect(stalled.status).toBe(200);
    expect(body.detail).toBe("READY");
    expect(body.rollup.changes_waiting).toBe(3);
    expect(body.rollup.last_refresh_age_seconds).toBeGreaterThanOrEqual(600);
    expect(body.rollup.warning).toStartWith("changes wait to be folded into the rollup and the last refresh was 6");
    expect((await lag()).age[0]!).toBeGreaterThanOrEqual(600);

    await refreshRollup(db.admin);
    const after = await lag();
    expect(after.waiting).toEqual([`${P}rollup_changes_waiting 0`]);
    expect(after.age[0]!).toBeLessThan(60);
    expect(await (await app.get("/readyz", {})).text()).toBe(`{"detail":"READY"}`);
    await loadFixture(db.admin, PRODUCTS, DAILY);
  });

  test("the refresh's duration, and how long the one running now has run (0 when none runs)", async () => {
    const [app] = fresh();
    await refreshRollup(db.admin);
    const gauges = async () => {
      const { text } = await scrape(app);
      const value = (name: string) => samples(text, `${P}${name}`).map((l) => Number(l.split(" ")[1]));
      return { duration: value("rollup_last_refresh_duration_seconds"), running: value("rollup_refresh_running_seconds") };
    };
    const [record] = await db.admin<{ ms: number }[]>`select ms from product_cost_refreshes`;
    expect(await gauges()).toEqual({ duration: [record!.ms / 1000], running: [0] });

    // A refresh that started ten minutes ago and holds the lock: running 600 s and more. (The
    // embedded database is one session, the service's too: the lock is taken on it.)
    const reserved = backend.name === "embedded" ? undefined : await db.admin.reserve();
    const holder = reserved ?? db.admin;
    try {
      await holder`select pg_advisory_lock(${REFRESH_LOCK_ID})`;
      await db.admin`update product_cost_refreshes set started_at = now() - interval '10 minutes', finished_at = now() - interval '11 minutes'`;
      const running = await gauges();
      expect(running.running[0]!).toBeGreaterThanOrEqual(600);
      expect(running.running[0]!).toBeLessThan(700);
    } finally {
      await holder`select pg_advisory_unlock(${REFRESH_LOCK_ID})`;
      reserved?.release();
    }
    // The lock released (the refresh gone without recording its end): none runs.
    expect((await gauges()).running).toEqual([0]);
    await loadFixture(db.admin, PRODUCTS, DAILY); // as the other tests expect it: nothing rendered
  });

  test("counts requests by method, route template and status; every unknown path is one 'unmatched' series", async () => {
    const [app] = fresh();
    const auth = { authorization: `Bearer ${KEY}` };
    for (const [path, headers] of [
      [JAN, auth],
      [JAN, { ...auth, accept: "text/csv" }],
      [JAN, {}],
      ["/external/v1/product-costs?month_from=bad&month_to=2024-01-31", auth],
      ["/healthz", {}],
      ["/healthz", {}],
      ["/no/such/path", {}],
      ["/another/unknown?x=1", {}],
      ["/docs/", {}],
    ] as const) {
      await (await app.get(path, headers)).text();
    }
    await (await app.handle(new Request("http://localhost/healthz", { method: "POST" }))).text();
    // /metrics is a known path like the others: another method is 405 with its Allow, not 404.
    const postMetrics = await app.handle(new Request("http://localhost/metrics", { method: "POST" }));
    expect([postMetrics.status, postMetrics.headers.get("allow"), await postMetrics.text()]).toEqual([405, "GET, HEAD", '{"detail":"Method Not Allowed"}']);
    const { text } = await scrape(app);
    expect(samples(text, `${P}http_requests_total`)).toEqual([
      `${P}http_requests_total{method="GET",route="/docs",status="307"} 1`, // /docs/ is sent to /docs
      `${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="200"} 2`,
      `${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="401"} 1`,
      `${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="422"} 1`,
      `${P}http_requests_total{method="GET",route="/healthz",status="200"} 2`,
      `${P}http_requests_total{method="GET",route="unmatched",status="404"} 2`,
      `${P}http_requests_total{method="POST",route="/healthz",status="405"} 1`,
      `${P}http_requests_total{method="POST",route="/metrics",status="405"} 1`,
    ]);
  });

  test("counts rows served by format", async () => {
    const [app] = fresh();
    await (await app.get(JAN)).text();
    await (await app.get(JAN + "&segment=all", { authorization: `Bearer ${KEY}`, accept: "text/csv" })).text();
    await (await app.get(JAN + "&segment=sample")).text();
    const { text } = await scrape(app);
    expect(samples(text, `${P}rows_served_total`)).toEqual([`${P}rows_served_total{format="arrow"} 0`, `${P}rows_served_total{format="csv"} 7`, `${P}rows_served_total{format="json"} 7`]);
  });

  test("a body the client abandons counts as 499 and as cut short by the client, never as a 200", async () => {
    const [app] = fresh({ batchSize: 2 });
    const res = await app.get(JAN);
    const reader = res.body!.getReader();
    await reader.read(); // "[" and the first batch of two rows
    await reader.cancel(new Error("the client went away"));
    await waitUntil("the request is logged", () => app.logs.some((l) => l.msg === "request"));
    const { text } = await scrape(app);
    expect(samples(text, `${P}http_requests_total`).filter((l) => l.includes("product-costs"))).toEqual([
      `${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="499"} 1`,
    ]);
    expect(samples(text, `${P}responses_cut_short_total`)).toEqual([
      `${P}responses_cut_short_total{cause="client"} 1`,
      `${P}responses_cut_short_total{cause="server"} 0`,
    ]);
    expect(app.logs.find((l) => l.msg === "request" && l.path === "/external/v1/product-costs")).toMatchObject({ status: 499, status_sent: 200, level: "info", rows: 2 });
  });

  test("records each request's latency in the histogram of its route", async () => {
    const [app] = fresh();
    for (let i = 0; i < 3; i++) await (await app.get(JAN)).text();
    await (await app.get("/healthz", {})).text();
    const { text } = await scrape(app);
    const lines = samples(text, `${P}http_request_duration_seconds`);
    const route = (r: string) => lines.filter((l) => l.includes(`route="${r}"`));
    const api = route("/external/v1/product-costs");
    expect(api.length).toBe(DURATION_BUCKETS.length + 3);
    expect(api.slice(-3, -2)).toEqual([`${P}http_request_duration_seconds_bucket{route="/external/v1/product-costs",le="+Inf"} 3`]);
    expect(api.at(-1)).toBe(`${P}http_request_duration_seconds_count{route="/external/v1/product-costs"} 3`);
    expect(api.at(-2)).toMatch(new RegExp(`^${P}http_request_duration_seconds_sum\\{route="/external/v1/product-costs"\\} \\d`));
    const counts = api.slice(0, DURATION_BUCKETS.length).map((l, i) => {
      expect(l.startsWith(`${P}http_request_duration_seconds_bucket{route="/external/v1/product-costs",le="${DURATION_BUCKETS[i]}"} `)).toBe(true);
      return Number(l.split(" ")[1]);
    });
    expect(counts).toEqual([...counts].sort((a, b) => a - b)); // cumulative
    expect(route("/healthz").at(-1)).toBe(`${P}http_request_duration_seconds_count{route="/healthz"} 1`);
  });

  test("a streaming answer holds a pool connection until its body is read, then gives it back", async () => {
    const [app] = fresh({ batchSize: 1 });
    const max = db.service.options.max;
    const pool = (inUse: number) => [
      `${P}database_pool_connections{state="in_use"} ${inUse}`,
      `${P}database_pool_connections{state="idle"} ${max - inUse}`,
    ];
    expect(samples((await scrape(app)).text, `${P}database_pool_connections`)).toEqual(pool(0));
    const open = await app.get(JAN);
    expect(open.status).toBe(200);
    const during = (await scrape(app)).text;
    expect(samples(during, `${P}database_pool_connections`)).toEqual(pool(1));
    expect(samples(during, `${P}database_pool_max`)).toEqual([`${P}database_pool_max ${max}`]);
    expect(samples(during, `${P}database_pool_waiting`)).toEqual([`${P}database_pool_waiting 0`]);
    await open.text();
    expect(samples((await scrape(app)).text, `${P}database_pool_connections`)).toEqual(pool(0));
  });

  test("no key, fingerprint, query string or request id ever appears in the metrics", async () => {
    const [app] = fresh();
    await (await app.get(`${JAN}&key=${KEY}`, { authorization: `Bearer ${KEY}`, "x-request-id": "rid-secret-1" })).text();
    await (await app.get(`/${KEY}?api_key=${KEY}`, { authorization: `Bearer ${KEY}` })).text();
    await (await app.get(`${JAN}`, { authorization: "Bearer wrong-key-77" })).text();
    const { text } = await scrape(app);
    const fingerprints = app.logs.map((l) => l.key).filter((k): k is string => typeof k === "string");
    expect(fingerprints.length).toBeGreaterThan(0);
    // The query's parameter names never appear; "api_key" only in the names of the key families.
    const withoutKeyFamilies = text.replaceAll(`${P}api_key_nearest_expiry`, "").replaceAll(`${P}api_keys`, "");
    for (const secret of [KEY, "wrong-key-77", "rid-secret-1", "month_from", "api_key", ...fingerprints]) {
      expect([secret, withoutKeyFamilies.includes(secret)]).toEqual([secret, false]);
    }
    // A key without a label in the key file is counted as "unlabelled", never by fingerprint.
    expect(samples(text, `${P}requests_by_key_total`)).toEqual([`${P}requests_by_key_total{key="unlabelled",status="200"} 1`]);
  });
});

describe("database errors by kind", () => {
  const servers: { stop(): void }[] = [];
  afterAll(() => servers.forEach((s) => s.stop()));

  const poolTo = (port: number) =>
    createPool({ url: `postgres://svc:pw-in-url-9@127.0.0.1:${port}/x`, max: 1, connectTimeoutMs: 1000, statementTimeoutMs: 1000, readOnly: true, applicationName: "pce-tests" });

  test("an unreachable database counts as unavailable, a silent one as timeout, and the URL's password is never shown", async () => {
    // Nothing listens on a port just released: connection refused.
    const gone = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const refusedPort = gone.port;
    gone.stop(true);
    // Accepts the connection and never answers: a hung server or a black-holing proxy.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    servers.push(silent);

    const metrics = createServiceMetrics({ version: "v", commit: "c" });
    const refused = testApp(poolTo(refusedPort), { metrics });
    const hung = testApp(poolTo(silent.port), { metrics, firstBatchTimeoutMs: 300, connectTimeoutMs: 300 });
    const a = await refused.get(JAN);
    const b = await hung.get(JAN);
    expect([a.status, await a.text(), b.status, await b.text()]).toEqual([503, '{"detail":"DATABASE_UNAVAILABLE"}', 503, '{"detail":"DATABASE_UNAVAILABLE"}']);
    const { text } = await scrape(refused);
    expect(family(text, `${P}database_errors_total`)).toEqual([
      `# HELP ${P}database_errors_total Requests that failed because of the database, by kind (timeout, unavailable, misconfigured, query).`,
      `# TYPE ${P}database_errors_total counter`,
      `${P}database_errors_total{kind="misconfigured"} 0`,
      `${P}database_errors_total{kind="query"} 0`,
      `${P}database_errors_total{kind="timeout"} 1`,
      `${P}database_errors_total{kind="unavailable"} 1`,
    ]);
    expect(samples(text, `${P}http_requests_total`)).toEqual([`${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="503"} 2`]);
    expect(text).not.toContain("pw-in-url-9");
  });

  test("a database that is down shows in the readiness gauges without any request (issue 46: an outage with no traffic alerts)", async () => {
    const gone = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const refusedPort = gone.port;
    gone.stop(true);
    const metrics = createServiceMetrics({ version: "v", commit: "c" });
    const idle = testApp(poolTo(refusedPort), { metrics });
    const { text } = await scrape(idle);
    expect([samples(text, `${P}ready`), samples(text, `${P}not_ready`)]).toEqual([[`${P}ready 0`], [`${P}not_ready{problem="DATABASE_UNAVAILABLE"} 1`]]);
    expect(samples(text, `${P}http_requests_total`)).toEqual([]); // no request before this scrape
  });
});

describe("METRICS_ENABLED", () => {
  test("defaults to on, and false turns it off", () => {
    expect(loadConfig([], {}).metricsEnabled).toBe(true);
    expect(loadConfig([], { METRICS_ENABLED: "false" }).metricsEnabled).toBe(false);
    expect(loadConfig(["--metrics-enabled=false"], {}).metricsEnabled).toBe(false);
  });

  test("without metrics the app has no /metrics route: 404 like any unknown path", async () => {
    const app = testApp(noDatabase());
    const res = await app.get("/metrics", {});
    expect({ status: res.status, body: await res.text() }).toEqual({ status: 404, body: '{"detail":"Not Found"}' });
  });
});
