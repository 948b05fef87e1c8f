// The OpenAPI document as its users' tools read it: Redocly's linter with its recommended
// rules finds no error, and a TypeScript client generated from it (openapi-typescript types,
// openapi-fetch calls) type-checks and gets the exact rows and errors from the service.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createConfig, lintFromString } from "@redocly/openapi-core";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import openapiTS, { astToString } from "openapi-typescript";
import { KEY, noDatabase, ring, testApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, JANUARY_NORMAL, PRODUCTS } from "./fixture.ts";

async function openApiDocument(): Promise<string> {
  const res = await testApp(noDatabase(), { keys: ring(KEY) }).get("/openapi.json", {});
  return res.text();
}

test("redocly lint with the recommended rules: no error", async () => {
  const problems = await lintFromString({ source: await openApiDocument(), absoluteRef: "openapi.json", config: await createConfig({ extends: ["recommended"] }) });
  const errors = problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
  expect(errors).toEqual([]);
});

describeBackends("a client generated from the document on $name", (backend) => {
  let db: BackendHandle;
  // Inside the checkout (ignored by git), so that both tsc and Bun find node_modules from there.
  const root = resolve(import.meta.dir, "../..");
  const work = join(root, ".build", `client-test-${process.pid}`);
  beforeAll(async () => {
    mkdirSync(work, { recursive: true });
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
  });
  afterAll(async () => {
    await db.close();
    rmSync(work, { recursive: true, force: true });
  });

  test("openapi-typescript's types type-check a call with openapi-fetch, which gets the rows and the documented errors", async () => {
    writeFileSync(join(work, "schema.d.ts"), astToString(await openapiTS(JSON.parse(await openApiDocument()))));
    // What a client author writes: typed paths, parameters and rows (a wrong name would not compile).
    writeFileSync(
      join(work, "client.ts"),
      `import createClient from "openapi-fetch";
import type { paths, components } from "./schema";
type Row = components["schemas"]["ProductCostRow"];
export function client(baseUrl: string, key: string, fetch: (r: Request) => Promise<Response>) {
  const api = createClient<paths>({ baseUrl, fetch, headers: { authorization: \`Bearer \${key}\` } });
  return (from: string, to: string, segment?: "normal" | "sample" | "all") =>
    api.GET("/external/v1/product-costs", { params: { query: { month_from: from, month_to: to, segment } } });
}
export const costOf = (row: Row): number | null => (row.purchase_cost_usd === null ? null : Number(row.purchase_cost_usd));
`,
    );
    const tsc = Bun.spawnSync(
      [process.execPath, "x", "tsc", "--noEmit", "--strict", "--module", "preserve", "--moduleResolution", "bundler", "--target", "es2022", "--skipLibCheck", "--types", "bun-types", join(work, "client.ts")],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    expect([tsc.exitCode, tsc.stdout.toString() + tsc.stderr.toString()]).toEqual([0, ""]);

    type Call = (from: string, to: string) => Promise<{ response: Response; data?: unknown; error?: unknown }>;
    const { client } = (await import(join(work, "client.ts"))) as { client: (baseUrl: string, key: string, fetch: (r: Request) => Promise<Response>) => Call };
    const app = testApp(db.service);
    const call = client("http://costs.internal", KEY, (r) => app.handle(r));
    const ok = await call("2024-01-01", "2024-01-31");
    expect([ok.response.status, ok.data]).toEqual([200, JSON.parse(JANUARY_NORMAL)]);
    const reversed = await call("2024-02-01", "2024-01-01");
    expect([reversed.response.status, reversed.error]).toEqual([400, { detail: "INVALID_MONTH_RANGE" }]);
    const wrongKey = await client("http://costs.internal", "not-a-key", (r) => app.handle(r))("2024-01-01", "2024-01-31");
    expect([wrongKey.response.status, wrongKey.error]).toEqual([401, { detail: "INVALID_API_KEY" }]);
  }, 60_000);

  test("the generated types hold every live answer: each body the service sends, typed as its status's content, compiles", async () => {
    writeFileSync(join(work, "schema.d.ts"), astToString(await openapiTS(JSON.parse(await openApiDocument()))));
    const app = testApp(db.service);
    const live = async (query: string, headers?: Record<string, string>) => (await app.get(`/external/v1/product-costs?${query}`, headers)).text();
    const bodies: [string, string][] = [
      ["200", await live("month_from=2024-01-01&month_to=2024-01-31&segment=all")],
      ["200", await live("month_from=2030-01-01&month_to=2030-01-31")],
      ["400", await live("month_from=2024-02-01&month_to=2024-01-01")],
      ["401", await live("month_from=2024-01-01&month_to=2024-01-31", { authorization: "Bearer nope" })],
      ["422", await live("month_from=2024-1&month_to=&segment=some")],
    ];
    // The body's text as a TypeScript value of the type the document gives its status.
    const checks = bodies.map(
      ([status, body], i) => `export const body${i}: paths["/external/v1/product-costs"]["get"]["responses"][${status}]["content"]["application/json"] = ${body};`,
    );
    writeFileSync(join(work, "live.ts"), `import type { paths } from "./schema";\n${checks.join("\n")}\n`);
    const tsc = Bun.spawnSync(
      [process.execPath, "x", "tsc", "--noEmit", "--strict", "--module", "preserve", "--moduleResolution", "bundler", "--target", "es2022", "--skipLibCheck", join(work, "live.ts")],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    expect([tsc.exitCode, tsc.stdout.toString() + tsc.stderr.toString()]).toEqual([0, ""]);
    // And a body the document does not allow does not compile: the check can fail.
    writeFileSync(join(work, "wrong.ts"), `import type { paths } from "./schema";\nexport const wrong: paths["/external/v1/product-costs"]["get"]["responses"][200]["content"]["application/json"] = [{ "erp_product_id": "1" }];\n`);
    const refused = Bun.spawnSync(
      [process.execPath, "x", "tsc", "--noEmit", "--strict", "--module", "preserve", "--moduleResolution", "bundler", "--target", "es2022", "--skipLibCheck", join(work, "wrong.ts")],
      { cwd: root, stdout: "pipe", stderr: "pipe" },
    );
    expect(refused.exitCode).toBe(2);
  }, 60_000);
});
