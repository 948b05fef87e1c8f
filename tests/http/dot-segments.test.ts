// Dot segments never route to another path (issue 31, item 8): over raw sockets to the
// server `serve` runs (listen() with the service's routes), every spelling of `.` and `..`
// (literal, %2e, %2E, mixed, `\` as separator, absolute form, a Host that does not parse)
// toward /metrics, /docs, /healthz and the endpoint answers the 404 an unknown path gets,
// as the original FastAPI app does. Bun resolves these in request.url before the handler
// sees it (src/edge/raw-routes.ts says how the raw target is still told apart).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { listen } from "../../src/edge/server.ts";
import { createServiceMetrics } from "../../src/service/service-metrics.ts";
import { KEY, noDatabase, testApp, type TestApp } from "../support/app.ts";
import { rawRoundTrip } from "../support/faults.ts";
import { parseAnswer } from "../support/hostile.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const NOT_FOUND = { status: 404, type: "application/json", body: '{"detail":"Not Found"}' };
const QUERY = "month_from=2024-01-01&month_to=2024-01-31";

/** Every way of writing a walk from /external up to `path` (`/metrics` …). */
const walksTo = (path: string) => [
  `/external/%2e%2e${path}`,
  `/external/v1/%2E%2E/%2e%2e${path}`,
  `/external/v1/../..${path}`,
  `/external/v1/.%2e/%2E.${path}`,
  `/external/./..${path}`,
  `/external/%2e/%2e%2E${path}`,
  `/external\\..${path}`,
  `/external/v1/..\\..${path}`,
  `${path}/.`,
  `/.${path}`,
];

describe("dot segments on the wire", () => {
  let app: TestApp;
  let server: ReturnType<typeof listen>;

  beforeAll(() => {
    app = testApp(noDatabase(), { metrics: createServiceMetrics({ version: "v", commit: "c" }) });
    server = listen({ host: "127.0.0.1", port: 0 }, app.handle, memoryLogger(), app.rawRoutes);
  });
  afterAll(() => {
    server.stop(true);
  });

  async function get(target: string, host: string | null = "127.0.0.1") {
    const head = [`GET ${target} HTTP/1.1`, ...(host === null ? [] : [`Host: ${host}`]), `Authorization: Bearer ${KEY}`, "Connection: close"];
    const answer = parseAnswer(await rawRoundTrip(server.port!, Buffer.from(head.join("\r\n") + "\r\n\r\n", "latin1")));
    if (!answer) throw new Error(`no answer to ${target}`);
    return { status: answer.status, type: answer.headers.get("content-type"), body: new TextDecoder().decode(answer.body) };
  }

  test("the targets themselves are served", async () => {
    for (const path of ["/metrics", "/docs", "/healthz"]) expect({ path, status: (await get(path)).status }).toEqual({ path, status: 200 });
  });

  for (const path of ["/metrics", "/docs", "/healthz"]) {
    test(`every walk to ${path} answers 404 Not Found, as an unknown path does`, async () => {
      const answers = [];
      for (const target of walksTo(path)) answers.push({ target, ...(await get(target)) });
      expect(answers).toEqual(walksTo(path).map((target) => ({ target, ...NOT_FOUND })));
    });

    test(`walks to ${path} in absolute form or with a Host that does not parse: 404`, async () => {
      const answers = [];
      for (const [target, host] of [
        [`http://evil.example/external/%2e%2e${path}`, "127.0.0.1"],
        [`http://evil.example/external/v1/../..${path}`, "evil.example"],
        [`/external/%2E%2e${path}`, "a b"],
        [`/external/v1/../..${path}`, ""],
        [`/external/.%2e${path}`, "[::1"],
        [`/external/.%2e${path}`, "xn--"],
        [`/external/v1/../..${path}#f`, "[::1"],
      ] as const)
        answers.push({ target, host, ...(await get(target, host)) });
      expect(answers.map(({ status, type, body }) => ({ status, type, body }))).toEqual(answers.map(() => NOT_FOUND));
    });
  }

  test("a walk that ends on the endpoint is refused before its key is read", async () => {
    for (const target of [`/external/v1/x/../product-costs?${QUERY}`, `/external/v2/%2e%2e/v1/product-costs?${QUERY}`, `/x/../external/v1/product-costs/?${QUERY}`]) {
      expect({ target, ...(await get(target)) }).toEqual({ target, ...NOT_FOUND });
    }
  });

  test("a walk's answer has the very headers of an unknown path's 404", async () => {
    const headersOf = async (target: string) => {
      const head = `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`;
      const answer = parseAnswer(await rawRoundTrip(server.port!, Buffer.from(head, "latin1")))!;
      return [...answer.headers].filter(([name]) => name !== "date" && name !== "x-request-id");
    };
    expect(await headersOf("/external/%2e%2e/metrics")).toEqual(await headersOf("/nothing"));
  });

  test("a walk is logged with the path it led to and dot_segments, and counted under no route", async () => {
    await get("/external/%2e%2e/healthz");
    await Bun.sleep(50);
    const line = app.logs.filter((l) => l.msg === "request").at(-1)!;
    expect({ path: line.path, status: line.status, dot_segments: line.dot_segments }).toEqual({ path: "/healthz", status: 404, dot_segments: true });
    const metrics = (await get("/metrics")).body;
    expect(metrics).not.toContain('route="/healthz",status="404"');
    expect(metrics).toContain('product_cost_export_http_requests_total{method="GET",route="unmatched",status="404"}');
  });

  test("Bun drops the raw target of a fragment with no query too: on a served path it is a walk (404)", async () => {
    // `/healthz#f` reaches the handler as /healthz from Bun's fallback, like `/x/../healthz#f`.
    expect(await get("/healthz#f")).toEqual(NOT_FOUND);
    expect((await get("/healthz?x#f")).status).toBe(200);
    // Where Bun leaves the URL raw (a Host it cannot use), the fragment is dropped as before.
    expect((await get("/healthz#f", "[::1")).status).toBe(200);
    expect((await get("/healthz#f", "a b")).status).toBe(200);
  });

  test("percent-encoded letters name no served path, walked to or not", async () => {
    for (const target of ["/metric%73", "/external/%2e%2e/metric%73", "/%68ealthz", "/external/%2e%2e/%68ealthz"]) {
      expect({ target, ...(await get(target)) }).toEqual({ target, ...NOT_FOUND });
    }
  });

  test("a walk to a path nobody serves stays the 404 it was; the endpoint's trailing slash still redirects", async () => {
    expect(await get("/x/../nothing")).toEqual(NOT_FOUND);
    expect(await get("/nothing")).toEqual(NOT_FOUND);
    expect((await get(`/external/v1/product-costs/?${QUERY}`)).status).toBe(307);
    expect((await get(`/external/v1/product-costs//?${QUERY}`)).status).toBe(307);
    // Inside the endpoint's own subtree a dot segment stays there: redirected to the endpoint.
    expect((await get(`/external/v1/product-costs/x/..?${QUERY}`)).status).toBe(307);
  });
});
