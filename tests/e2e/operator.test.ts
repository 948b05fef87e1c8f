// The executable's operator features over real HTTP, copied alone to an empty directory:
// Swagger UI and its assets served from inside the binary (no internet needed), the
// OpenAPI document, CSV output and Prometheus metrics (and their switch).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { JANUARY_NORMAL, JANUARY_NORMAL_CSV } from "../http/fixture.ts";
import { cleanEnv, fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";

const KEY = "e2e-operator-key-7d41";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const SWAGGER_UI = resolve(import.meta.dir, "../../node_modules/swagger-ui-dist");
let bin: { dir: string; path: string };
let server: RunningBinary;

beforeAll(async () => {
  bin = isolatedBinary();
  const database = await fixtureDatabaseEnv(bin.path);
  server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
}, 60000);

afterAll(async () => {
  await server?.stop();
});

const get = (path: string, headers: Record<string, string> = {}) => fetch(server.url + path, { headers });

/** The value of one sample line, 0 when the series does not exist yet. */
function sample(text: string, series: string): number {
  const line = text.split("\n").find((l) => l.startsWith(series + " "));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("Swagger UI without internet access", () => {
  test("/docs references only this server, and each asset it loads is served from the executable", async () => {
    const res = await get("/docs");
    const html = await res.text();
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/html; charset=utf-8"]);
    expect(html).not.toMatch(/https?:|\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    const assets = [...html.matchAll(/<(?:script src|link rel="stylesheet" href)="([^"]+)"/g)].map((m) => m[1]!);
    // Relative to /docs, so that a proxy may put the service under a sub-path.
    expect(assets).toEqual(["docs/assets/swagger-ui.css", "docs/assets/swagger-ui-bundle.js"]);
    expect(assets.map((a) => new URL(a, "http://h/docs").pathname)).toEqual(["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js"]);
    for (const [path, file, type] of [
      ["/docs/assets/swagger-ui.css", "swagger-ui.css", "text/css; charset=utf-8"],
      ["/docs/assets/swagger-ui-bundle.js", "swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
    ] as const) {
      const asset = await get(path);
      const bytes = Buffer.from(await asset.arrayBuffer());
      expect([path, asset.status, asset.headers.get("content-type")]).toEqual([path, 200, type]);
      expect(bytes.equals(Buffer.from(await Bun.file(`${SWAGGER_UI}/${file}`).arrayBuffer()))).toBe(true);
    }
  });

  test("/openapi.json is the OpenAPI 3.0.3 document of the one operation, stamped with the executable's version", async () => {
    const res = await get("/openapi.json");
    const doc = (await res.json()) as { openapi: string; info: { version: string }; paths: Record<string, unknown> };
    const version = Bun.spawnSync([bin.path, "--version"], { env: cleanEnv() }).stdout.toString();
    expect(res.status).toBe(200);
    expect(doc.openapi).toBe("3.0.3");
    expect(Object.keys(doc.paths)).toEqual(["/external/v1/product-costs"]);
    expect(version).toStartWith(`product-cost-export ${doc.info.version} (`);
  });
});

describe("CSV over HTTP", () => {
  test("Accept: text/csv gets the rows as CSV, and no Accept gets the JSON", async () => {
    const csv = await get(JAN, { authorization: `Bearer ${KEY}`, accept: "text/csv" });
    expect({ status: csv.status, type: csv.headers.get("content-type"), body: await csv.text() }).toEqual({
      status: 200,
      type: "text/csv; charset=utf-8",
      body: JANUARY_NORMAL_CSV,
    });
    const json = await get(JAN, { authorization: `Bearer ${KEY}` });
    expect({ status: json.status, type: json.headers.get("content-type"), body: await json.text() }).toEqual({
      status: 200,
      type: "application/json",
      body: JANUARY_NORMAL,
    });
  });
});

describe("Prometheus metrics over HTTP", () => {
  test("/metrics counts the requests and rows just served, and shows no key", async () => {
    const P = "product_cost_export_";
    const before = await (await get("/metrics")).text();
    await (await get(JAN, { authorization: `Bearer ${KEY}`, accept: "text/csv" })).text();
    await (await get(JAN, { authorization: `Bearer ${KEY}` })).text();
    await (await get(`${JAN}&k=${KEY}`, { authorization: "Bearer not-the-key" })).text();
    await (await get(`/${KEY}`)).text();
    const res = await get("/metrics");
    const after = await res.text();
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "text/plain; version=0.0.4; charset=utf-8"]);
    const delta = (series: string) => sample(after, series) - sample(before, series);
    expect({
      ok: delta(`${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="200"}`),
      unauthorized: delta(`${P}http_requests_total{method="GET",route="/external/v1/product-costs",status="401"}`),
      unmatched: delta(`${P}http_requests_total{method="GET",route="unmatched",status="404"}`),
      csvRows: delta(`${P}rows_served_total{format="csv"}`),
      jsonRows: delta(`${P}rows_served_total{format="json"}`),
      latency: delta(`${P}http_request_duration_seconds_count{route="/external/v1/product-costs"}`),
      scrapes: delta(`${P}http_requests_total{method="GET",route="/metrics",status="200"}`),
    }).toEqual({ ok: 2, unauthorized: 1, unmatched: 1, csvRows: 6, jsonRows: 6, latency: 3, scrapes: 1 });
    expect(after).toMatch(new RegExp(`^${P}build_info\\{version="[^"]+",commit="[^"]+"\\} 1$`, "m"));
    expect(after).toMatch(new RegExp(`^${P}database_pool_connections\\{state="in_use"\\} 0$`, "m"));
    expect(after).not.toContain(KEY);
    expect(after).not.toContain("not-the-key");
  });

  test("METRICS_ENABLED=false: /metrics answers 404 and the API still works", async () => {
    await server.stop(); // one process per data directory: make room for the second one
    const database = await fixtureDatabaseEnv(bin.path);
    server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY, METRICS_ENABLED: "false" }, [], bin.dir);
    const res = await get("/metrics");
    expect({ status: res.status, body: await res.text() }).toEqual({ status: 404, body: '{"detail":"Not Found"}' });
    expect((await get(JAN, { authorization: `Bearer ${KEY}` })).status).toBe(200);
  }, 60000);
});
