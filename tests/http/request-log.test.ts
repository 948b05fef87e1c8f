// What every answer carries and what its log line says, for answers the database never
// sees (no pool is reached): the bytes sent on a 4xx line, the headers of routes served by a
// library, and the request id echoed only within its documented length.

import { afterAll, expect, test } from "bun:test";
import { createPool } from "../../src/database/client.ts";
import { KEY, testApp } from "../support/app.ts";

// Never connected to: nothing below reaches the database.
const sql = createPool({ url: "postgres://nobody@127.0.0.1:1/none", max: 1, connectTimeoutMs: 500, statementTimeoutMs: 1000, readOnly: true, applicationName: "pce-log-test" });
afterAll(() => sql.end({ timeout: 1 }));

const lastLine = async (app: ReturnType<typeof testApp>) => {
  for (let i = 0; i < 100 && !app.logs.some((l) => l.msg === "request"); i++) await Bun.sleep(5);
  return app.logs.filter((l) => l.msg === "request").at(-1)!;
};

test.each([
  ["/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31", {}, 401],
  ["/external/v1/product-costs?month_from=x", { authorization: `Bearer ${KEY}` }, 422],
  ["/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", { authorization: `Bearer ${KEY}` }, 400],
  ["/no/such/path", {}, 404],
] as const)("%s: the log line's bytes are the body's", async (path, headers, status) => {
  const app = testApp(sql);
  const res = await app.get(path, headers as Record<string, string>);
  const body = await res.arrayBuffer();
  expect(res.status).toBe(status);
  expect(await lastLine(app)).toMatchObject({ status, bytes: body.byteLength });
});

test("/openapi.json and /docs carry the headers every answer has", async () => {
  const app = testApp(sql);
  // (/docs sets its own Cache-Control, which is kept.)
  for (const [path, cacheControl] of [["/openapi.json", "no-store"], ["/docs", "no-cache"]]) {
    const res = await app.get(path!, {});
    await res.arrayBuffer();
    expect([path, res.status, res.headers.get("cache-control"), res.headers.get("x-content-type-options")]).toEqual([path, 200, cacheControl, "nosniff"]);
    expect(res.headers.get("x-request-id")).toBeTruthy();
  }
});

test("X-Request-Id is echoed up to 128 characters, replaced beyond", async () => {
  const app = testApp(sql);
  const echo = async (id: string) => (await app.get("/healthz", { "x-request-id": id })).headers.get("x-request-id");
  expect(await echo("a".repeat(128))).toBe("a".repeat(128));
  const long = await echo("a".repeat(129));
  expect(long).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
});
