// Cross-origin reads (issue 55, part 2): off by default, exactly as before; with
// CORS_ALLOWED_ORIGINS, a listed origin's preflight is answered and its reads carry the
// Access-Control-* headers a page needs; every answer says Vary: Origin; an origin not listed
// is answered as without CORS. The browser's own view: tests/e2e/browser-cors.test.ts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";
import { parseCorsOrigins } from "../../src/settings/cors-origins.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const DASH = "https://dash.example.com";
const AUTH = { authorization: `Bearer ${KEY}` };
const EXPOSED = "ETag, X-Data-Changed-At, X-Request-Id, Content-Disposition, Retry-After, RateLimit, RateLimit-Policy, X-Demo-Data, traceresponse";
const cors = (res: Response) => Object.fromEntries([...res.headers].filter(([name]) => name.startsWith("access-control-") || name === "vary"));

function preflight(app: TestApp, path: string, origin: string, method = "GET", headers = "authorization,if-none-match") {
  return app.handle(new Request(`http://localhost${path}`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } }));
}

describeBackends("CORS on $name", (backend) => {
  let db: BackendHandle;
  let off: TestApp;
  let on: TestApp;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    off = testApp(db.service);
    on = testApp(db.service, { corsAllowedOrigins: `${DASH}, http://127.0.0.1:5173` });
  });
  afterAll(async () => {
    await db.close();
  });

  describe("off by default: no Access-Control-* header, no Vary: Origin, the preflight 405 as before", () => {
    test("a read with an Origin", async () => {
      const res = await off.get(JAN, { ...AUTH, origin: DASH });
      expect([res.status, await res.text(), cors(res)]).toEqual([200, JANUARY_NORMAL, { vary: "Accept, Accept-Encoding" }]);
    });
    test("a preflight", async () => {
      const res = await preflight(off, "/external/v1/product-costs", DASH);
      expect([res.status, await res.text(), res.headers.get("allow"), cors(res)]).toEqual([405, '{"detail":"Method Not Allowed"}', "GET, HEAD", {}]);
    });
  });

  describe("a listed origin", () => {
    test("its preflight: 204, the methods, the key's and the conditions' headers, a max age, Vary", async () => {
      const res = await preflight(on, "/external/v1/product-costs", DASH);
      expect([res.status, await res.text(), cors(res)]).toEqual([
        204,
        "",
        {
          "access-control-allow-origin": DASH,
          "access-control-allow-methods": "GET, HEAD",
          "access-control-allow-headers": "Authorization, If-None-Match, If-Match, Accept, X-Request-Id, traceparent",
          "access-control-max-age": "7200",
          vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        },
      ]);
      expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
    });

    test("its read: the rows as without CORS, its origin allowed, the headers a client needs exposed, Vary: Origin", async () => {
      const res = await on.get(JAN, { ...AUTH, origin: DASH });
      expect([res.status, await res.text(), cors(res)]).toEqual([
        200,
        JANUARY_NORMAL,
        { "access-control-allow-origin": DASH, "access-control-expose-headers": EXPOSED, vary: "Accept, Accept-Encoding, Origin" },
      ]);
    });

    test("its 304 and its errors name it too: a page reads a 401 and a 422 as well as a 200", async () => {
      const first = await on.get(JAN, { ...AUTH, origin: DASH });
      await first.text();
      const unchanged = await on.get(JAN, { ...AUTH, origin: DASH, "if-none-match": first.headers.get("etag")! });
      const refused = await on.get(JAN, { origin: DASH, authorization: "Bearer wrong" });
      const invalid = await on.get("/external/v1/product-costs?month_from=nope&month_to=2024-01-31", { ...AUTH, origin: DASH });
      for (const [res, status] of [[unchanged, 304], [refused, 401], [invalid, 422]] as const) {
        await res.text();
        expect([res.status, res.headers.get("access-control-allow-origin"), res.headers.get("access-control-expose-headers"), res.headers.get("vary")?.endsWith("Origin")]).toEqual([status, DASH, EXPOSED, true]);
      }
    });

    test("the API document may be read by a page (its client generated in the browser); the other paths may not", async () => {
      const doc = await on.get("/openapi.json", { origin: DASH });
      await doc.text();
      expect(doc.headers.get("access-control-allow-origin")).toBe(DASH);
      for (const path of ["/healthz", "/metrics", "/nowhere"]) {
        const res = await on.get(path, { origin: DASH });
        await res.text();
        expect([path, res.headers.get("access-control-allow-origin"), res.headers.get("vary")]).toEqual([path, null, "Origin"]);
      }
      const res = await preflight(on, "/healthz", DASH);
      expect([res.status, res.headers.get("access-control-allow-origin")]).toEqual([405, null]);
      await res.text();
    });

    test("a preflight for a method the API does not answer is answered as without CORS", async () => {
      const res = await preflight(on, "/external/v1/product-costs", DASH, "DELETE");
      expect([res.status, res.headers.get("access-control-allow-origin")]).toEqual([405, null]);
      await res.text();
    });
  });

  describe("an origin not listed is answered as without CORS, only Vary: Origin added", () => {
    test.each([["https://evil.example.com"], ["https://dash.example.com.evil.example"], ["http://dash.example.com"], ["https://DASH.example.com"], ["null"], [""]])("%p", async (origin) => {
      const pre = await preflight(on, "/external/v1/product-costs", origin);
      expect([pre.status, cors(pre)]).toEqual([405, { vary: "Origin" }]);
      await pre.text();
      const res = await on.get(JAN, { ...AUTH, origin });
      expect([res.status, await res.text(), cors(res)]).toEqual([200, JANUARY_NORMAL, { vary: "Accept, Accept-Encoding, Origin" }]);
    });
  });

  test("* lets any page read, each answer naming the page's own origin; the opaque origin null never", async () => {
    const any = testApp(db.service, { corsAllowedOrigins: "*" });
    const res = await any.get(JAN, { ...AUTH, origin: "https://anywhere.example:8443" });
    await res.text();
    expect(res.headers.get("access-control-allow-origin")).toBe("https://anywhere.example:8443");
    const opaque = await any.get(JAN, { ...AUTH, origin: "null" });
    await opaque.text();
    expect(opaque.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("CORS_ALLOWED_ORIGINS is checked at start", () => {
  test.each([
    ["https://dash.example.com", []],
    ["https://dash.example.com, http://127.0.0.1:5173,http://[::1]:8080", []],
    ["*", []],
    ["https://dash.example.com/", ['entry "https://dash.example.com/" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
    ["https://Dash.example.com", ['entry "https://Dash.example.com" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
    ["https://dash.example.com:443", ['entry "https://dash.example.com:443" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
    ["dash.example.com", ['entry "dash.example.com" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
    ["*, https://dash.example.com", ['entry "*" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
    ["http://127.0.0.1:70000", ['entry "http://127.0.0.1:70000" is not an origin as a browser sends it: scheme://host[:port], lowercase, no path, no default port (https://dash.example.com), or * alone']],
  ] as const)("%p", (setting, problems) => {
    expect(parseCorsOrigins(setting).problems).toEqual([...problems]);
  });
});
