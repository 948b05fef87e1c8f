// The OpenAPI document at /openapi.json and Swagger UI at /docs, in process: the document is
// valid OpenAPI 3.0, matches the specification's tables (every parameter, field and status)
// and what the service really answers; the UI page loads nothing from another host.
import SwaggerParser from "@apidevtools/swagger-parser";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { KEY, noDatabase, ring, testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

type Json = Record<string, any>;
const PATH = "/external/v1/product-costs";

// The specification's own tables, read from its copy in this repository
// (docs/specification.md): the document must follow them, not a retyped version of them.
const SPEC = readFileSync(resolve(import.meta.dir, "../../docs/specification.md"), "utf8");

/** The rows of the first Markdown table after `heading` (a line of the spec), as records keyed by the header cells. */
function specTable(heading: string): Record<string, string>[] {
  const lines = SPEC.split("\n");
  const start = lines.findIndex((l) => l.trim() === heading);
  if (start === -1) throw new Error(`the specification has no line ${JSON.stringify(heading)}`);
  const rows: string[][] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith("|")) {
      if (rows.length) break;
      continue;
    }
    rows.push(line.split("|").slice(1, -1).map((c) => c.trim()));
  }
  const [header, , ...body] = rows;
  return body.map((cells) => Object.fromEntries(header!.map((h, i) => [h, cells[i]!])));
}

const SPEC_QUERY_PARAMETERS = specTable("Query parameters:").map((p) => ({
  name: p.Name!,
  type: p.Type!.split(",")[0]!.trim(), // "string, format date (ISO 8601, YYYY-MM-DD)"
  ...(p.Type!.includes("format date") ? { format: "date" } : {}),
  required: p.Required === "yes",
  ...(p.Default !== "none" ? { default: p.Default } : {}),
  ...(p["Allowed values"]!.includes(",") ? { enum: p["Allowed values"]!.split(",").map((v) => v.trim()) } : {}),
}));
const SPEC_ROW_FIELDS: [string, string][] = specTable("### Product cost row").map((f) => [f.Field!, f.Type!]); // every one nullable
const SPEC_DETAIL_ERRORS: [number, string][] = specTable("## Errors")
  .filter((e) => e.Body!.includes("detail = "))
  .map((e) => [Number(e.Status), /detail = (\w+)/.exec(e.Body!)![1]!]);

test("the specification's tables are read whole", () => {
  expect(SPEC_QUERY_PARAMETERS).toEqual([
    { name: "month_from", type: "string", format: "date", required: true },
    { name: "month_to", type: "string", format: "date", required: true },
    { name: "segment", type: "string", required: false, default: "normal", enum: ["normal", "sample", "all"] },
  ]);
  expect(SPEC_ROW_FIELDS.map(([f]) => f)).toHaveLength(7);
  expect(SPEC_DETAIL_ERRORS).toEqual([
    [400, "INVALID_MONTH_RANGE"],
    [401, "INVALID_API_KEY"],
    [503, "EXTERNAL_API_NOT_CONFIGURED"],
  ]);
});
const SPEC_VALIDATION_ITEM = { required: ["loc", "msg", "type"], optional: ["ctx", "input"] };
// design.md's additions: 500 INTERNAL_ERROR, 503 DATABASE_UNAVAILABLE; issue 4's overload answers;
// issue 31's revalidation (304) and If-Match (412).
const ALL_STATUSES = ["200", "304", "400", "401", "412", "414", "422", "429", "431", "500", "503"];
/** The headers the 200 and the 304 say, besides those of the HTTP layer (Content-Type, Content-Length, Date). */
const OK_HEADERS = ["X-Request-Id", "X-Content-Type-Options", "X-Demo-Data", "ETag", "Cache-Control", "Vary", "X-Data-Changed-At", "Content-Disposition", "Content-Encoding"];
const NOT_MODIFIED_HEADERS = ["X-Request-Id", "X-Content-Type-Options", "X-Demo-Data", "ETag", "Cache-Control", "Vary", "X-Data-Changed-At"];

describe("the OpenAPI document", () => {
  let app: TestApp;
  let doc: Json;
  let op: Json;
  beforeAll(async () => {
    app = testApp(noDatabase(), { keys: ring(KEY) }); // the document needs no database
    const res = await app.get("/openapi.json", {});
    expect([res.status, res.headers.get("content-type")]).toEqual([200, "application/json;charset=utf-8"]);
    doc = (await res.json()) as Json;
    op = doc.paths[PATH].get;
  });

  const resolveRef = (schema: Json): Json => (schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema);

  test("is served at /openapi.json without a key and is valid OpenAPI 3.0.3", async () => {
    expect(doc.openapi).toBe("3.0.3");
    const api = (await SwaggerParser.validate(structuredClone(doc) as never)) as Json;
    expect(api.info.title).toBe("product-cost-export");
  });

  test("documents the one API operation, GET and its HEAD, and hides the operator routes (/healthz, /readyz, /metrics, /docs)", () => {
    expect(Object.keys(doc.paths)).toEqual([PATH]);
    expect(Object.keys(doc.paths[PATH])).toEqual(["get", "head"]);
  });

  test("HEAD is the GET with no content: the same parameters, security and statuses, each with the GET's headers", () => {
    const head = doc.paths[PATH].head;
    const withoutContent = Object.fromEntries(Object.entries(op.responses as Record<string, Json>).map(([status, { content, ...response }]) => [status, response]));
    expect(head).toEqual({
      ...op,
      operationId: "headProductCosts",
      summary: "Product costs' status and headers, without the rows",
      description: head.description,
      responses: withoutContent,
    });
    expect(op.operationId).toBe("listProductCosts");
    expect(Object.keys(head.responses)).toEqual(ALL_STATUSES);
    expect(Object.values(head.responses as Record<string, Json>).filter((r) => "content" in r)).toEqual([]);
    expect(head.description).toContain("without content");
  });

  test("declares Bearer authentication on the operation", () => {
    expect(doc.components.securitySchemes).toEqual({
      bearerAuth: { type: "http", scheme: "bearer", description: "A product-cost API key issued by the service operator." },
    });
    expect(op.security).toEqual([{ bearerAuth: [] }]);
  });

  test("lists every query parameter of the specification with its type, format, requiredness, default and allowed values", () => {
    const query = op.parameters.filter((p: Json) => p.in === "query");
    expect(query.map((p: Json) => p.name)).toEqual(SPEC_QUERY_PARAMETERS.map((p) => p.name));
    for (const spec of SPEC_QUERY_PARAMETERS) {
      const p = op.parameters.find((x: Json) => x.name === spec.name);
      expect({ in: p.in, name: p.name, required: p.required, type: p.schema.type, format: p.schema.format, default: p.schema.default, enum: p.schema.enum }).toEqual({
        in: "query",
        name: spec.name,
        required: spec.required,
        type: spec.type,
        format: spec.format,
        default: spec.default,
        enum: spec.enum,
      });
    }
    // Descriptions on the parameter itself, where Swagger UI shows them.
    expect(query).toEqual([
      {
        name: "month_from", in: "query", required: true,
        description: "Inclusive start date, YYYY-MM-DD (a full date despite the name).",
        schema: { type: "string", format: "date", example: "2026-10-01" },
      },
      {
        name: "month_to", in: "query", required: true,
        description: "Inclusive end date, YYYY-MM-DD. Must not be before month_from.",
        schema: { type: "string", format: "date", example: "2026-10-31" },
      },
      {
        name: "segment", in: "query", required: false,
        description: "normal = normal products; sample = sample products; all = both.",
        schema: { type: "string", enum: ["normal", "sample", "all"], default: "normal" },
      },
    ]);
  });

  test("answers every status with exactly the content types the service sends (a 304 has no body)", () => {
    expect(Object.keys(op.responses)).toEqual(ALL_STATUSES);
    for (const status of ALL_STATUSES) {
      const types = status === "200" ? ["application/json", "text/csv", "application/vnd.apache.arrow.stream"] : status === "304" ? [] : ["application/json"];
      expect([status, Object.keys(op.responses[status].content ?? {})]).toEqual([status, types]);
      expect(op.responses[status].description.length).toBeGreaterThan(10);
    }
  });

  test("the 200 and the 304 name the headers revalidation needs, each described with its schema", () => {
    expect(Object.keys(op.responses["200"].headers)).toEqual(OK_HEADERS);
    expect(Object.keys(op.responses["304"].headers)).toEqual(NOT_MODIFIED_HEADERS);
    for (const status of ["200", "304"]) {
      for (const [name, header] of Object.entries(op.responses[status].headers as Record<string, Json>)) {
        expect([status, name, header.schema.type, header.description.length > 20]).toEqual([status, name, "string", true]);
      }
    }
    // Not required: the daily rows' answers have none (docs/api.md).
    expect(op.responses["200"].headers["ETag"].required).toBe(false);
    expect(op.responses["304"].headers["ETag"].required).toBe(false);
    expect(op.responses["200"].headers["ETag"].description).toContain("Absent where the answer is read from the daily rows directly");
    expect(op.responses["200"].headers["Vary"].schema.enum).toEqual(["Accept, Accept-Encoding", "Accept, Accept-Encoding, Origin"]);
    expect(op.responses["200"].headers["Cache-Control"].schema.enum).toEqual(["private, no-cache"]);
  });

  test("the conditional request headers are parameters: If-None-Match and If-Match", () => {
    expect(op.parameters.filter((p: Json) => p.in === "header").map((p: Json) => [p.name, p.required, p.schema.type])).toEqual([
      ["If-None-Match", false, "string"],
      ["If-Match", false, "string"],
    ]);
  });

  test("the 200 is an array of rows with every field of the specification, each nullable, none missing", () => {
    const array = resolveRef(op.responses["200"].content["application/json"].schema);
    expect(array.type).toBe("array");
    const row = resolveRef(array.items);
    expect(row.type).toBe("object");
    expect(Object.keys(row.properties)).toEqual(SPEC_ROW_FIELDS.map(([name]) => name));
    for (const [name, type] of SPEC_ROW_FIELDS) {
      expect([name, row.properties[name].type, row.properties[name].nullable]).toEqual([name, type, true]);
    }
    // The service always writes all seven fields (null for not costed): documented as required.
    expect(row.required).toEqual(SPEC_ROW_FIELDS.map(([name]) => name));
    expect(op.responses["200"].content["text/csv"].schema.type).toBe("string");
  });

  test("what a generator needs (issue 55, part 3): int64 ids, amounts described as exact decimals, named schemas, a clean operationId, an example for every body", () => {
    const row = doc.components.schemas.ProductCostRow;
    expect([row.properties.erp_product_id.type, row.properties.erp_product_id.format]).toEqual(["integer", "int64"]);
    for (const amount of ["purchase_cost_usd", "inbound_freight_usd", "shipping_to_customer_usd", "warehouse_fees_usd"]) {
      expect([amount, row.properties[amount].type, row.properties[amount].format]).toEqual([amount, "number", "decimal"]);
      expect(row.properties[amount].description).toContain("An exact decimal");
      expect(row.properties[amount].description).toContain("parse_float=decimal.Decimal");
    }
    expect(op.responses["429"].headers["Retry-After"].schema).toEqual({ type: "integer", format: "int32", minimum: 1, example: 5 });
    expect([op.operationId, doc.paths[PATH].head.operationId]).toEqual(["listProductCosts", "headProductCosts"]);
    // Every body's schema is a named component, and every JSON body has an example that validates against it.
    for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
      const json = response.content?.["application/json"];
      if (!json) continue;
      expect([status, json.schema.$ref?.startsWith("#/components/schemas/")]).toEqual([status, true]);
      expect([status, json.example === undefined]).toEqual([status, false]);
    }
    expect(Object.keys(doc.components.schemas)).toEqual([
      "ProductCosts", "ProductCostRow", "InvalidMonthRange", "InvalidApiKey", "PreconditionFailed", "UriTooLong", "RateLimited",
      "HeadersTooLarge", "InternalError", "ServiceUnavailable", "ValidationError", "HTTPValidationError",
    ]);
  });

  test("the error examples are what the service answers: 400, 401 and 422 byte for byte", async () => {
    const app = testApp(noDatabase(), { keys: ring(KEY) });
    const cases: [string, string, Record<string, string>?][] = [
      ["400", "/external/v1/product-costs?month_from=2026-02-01&month_to=2026-01-01"],
      ["401", "/external/v1/product-costs?month_from=2026-01-01&month_to=2026-01-31", { authorization: "Bearer not-a-key" }],
      ["422", "/external/v1/product-costs?month_from=2026-1&month_to=2026-01-31"],
    ];
    for (const [status, path, headers] of cases) {
      const res = await app.get(path, headers);
      expect([status, res.status, await res.text()]).toEqual([status, Number(status), JSON.stringify(op.responses[status].content["application/json"].example)]);
    }
  });

  test("servers: the service as the document was fetched from it, absolute; behind a trusted proxy, as the proxy forwards it", async () => {
    const served = async (headers: Record<string, string>, trustedProxies?: string) => {
      const app = testApp(noDatabase(), { keys: ring(KEY), ...(trustedProxies ? { trustedProxies } : {}) });
      const res = await app.handle(new Request("http://localhost/openapi.json", { headers }), { requestIP: () => ({ address: "10.0.0.5" }) });
      return ((await res.json()) as Json).servers.map((s: Json) => s.url);
    };
    expect(await served({ host: "costs.example.com:8080" })).toEqual(["http://costs.example.com:8080"]);
    expect(await served({ host: "costs.example.com", "x-forwarded-proto": "https", "x-forwarded-prefix": "/costs" })).toEqual(["http://costs.example.com"]);
    expect(await served({ host: "10.0.0.9:8080", "x-forwarded-proto": "https", "x-forwarded-host": "costs.example.com", "x-forwarded-prefix": "/costs/" }, "10.0.0.0/8")).toEqual(["https://costs.example.com/costs"]);
    expect(await served({ host: "evil.example\"/><script>" })).toEqual(["/"]);
    expect(await served({})).toEqual(["/"]);
  });

  test("every other error body is {detail: <code>} with the codes the service sends", () => {
    const codes = (status: string) => {
      const schema = resolveRef(op.responses[status].content["application/json"].schema);
      expect(Object.keys(schema.properties)).toEqual(["detail"]);
      expect(schema.required).toEqual(["detail"]);
      expect(schema.properties.detail.type).toBe("string");
      return schema.properties.detail.enum;
    };
    for (const [status, code] of SPEC_DETAIL_ERRORS) expect(codes(String(status))).toContain(code);
    expect(codes("400")).toEqual(["INVALID_MONTH_RANGE"]);
    expect(codes("401")).toEqual(["INVALID_API_KEY"]);
    expect(codes("414")).toEqual(["URI Too Long"]);
    expect(codes("431")).toEqual(["Request Header Fields Too Large"]);
    expect(codes("412")).toEqual(["Precondition Failed"]);
    expect(codes("429")).toEqual(["RATE_LIMITED"]);
    expect(codes("500")).toEqual(["INTERNAL_ERROR"]);
    expect(codes("503")).toEqual(["EXTERNAL_API_NOT_CONFIGURED", "DATABASE_UNAVAILABLE", "OVERLOADED"]);
  });

  test("the 422 body is {detail: [validation error items]} with every field of the specification's item table", () => {
    const body = resolveRef(op.responses["422"].content["application/json"].schema);
    expect(body.properties.detail.type).toBe("array");
    const item = resolveRef(body.properties.detail.items);
    expect(Object.keys(item.properties).sort()).toEqual([...SPEC_VALIDATION_ITEM.required, ...SPEC_VALIDATION_ITEM.optional].sort());
    for (const field of SPEC_VALIDATION_ITEM.required) expect(item.required).toContain(field);
    expect(item.required).not.toContain("ctx");
    expect(item.properties.loc).toMatchObject({ type: "array", items: { anyOf: [{ type: "string" }, { type: "integer" }] } });
    expect(item.properties.msg.type).toBe("string");
    expect(item.properties.type.type).toBe("string");
    expect(item.properties.ctx.type).toBe("object");
  });
});

describeBackends("the OpenAPI document agrees with what the service answers on $name", (backend) => {
  let db: BackendHandle;
  let app: TestApp;
  let doc: Json;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    app = testApp(db.service);
    doc = (await (await app.get("/openapi.json", {})).json()) as Json;
  });
  afterAll(async () => {
    await db.close();
  });

  const documented = (status: number) => {
    const schema = doc.paths[PATH].get.responses[String(status)].content["application/json"].schema;
    return schema.$ref ? doc.components.schemas[schema.$ref.split("/").pop()] : schema;
  };

  test("a 200 row has exactly the documented fields, in the documented order", async () => {
    const rows = (await (await app.get(`${PATH}?month_from=2024-01-01&month_to=2024-01-31&segment=all`)).json()) as Json[];
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(Object.keys(row)).toEqual(Object.keys(doc.components.schemas.ProductCostRow.properties));
  });

  test("the 400, 401 and 503 bodies carry a documented code", async () => {
    const cases: [number, Promise<Response>][] = [
      [400, app.get(`${PATH}?month_from=2024-02-01&month_to=2024-01-01`)],
      [401, app.get(`${PATH}?month_from=2024-01-01&month_to=2024-01-31`, {})],
      [503, testApp(db.service, { keys: ring() }).get(`${PATH}?month_from=2024-01-01&month_to=2024-01-31`)],
    ];
    for (const [status, pending] of cases) {
      const res = await pending;
      const body = (await res.json()) as Json;
      expect(res.status).toBe(status);
      expect(Object.keys(body)).toEqual(["detail"]);
      expect(documented(status).properties.detail.enum).toContain(body.detail);
    }
  });

  test("the 200 (JSON, CSV, compressed, HEAD), the 304 and the 412 send the documented status and headers", async () => {
    const EVERY_ANSWER = ["content-type", "content-length", "date"];
    const sent = (res: Response) => [...res.headers.keys()].filter((n) => !EVERY_ANSWER.includes(n)).sort();
    const declared = (status: number) => Object.keys(doc.paths[PATH].get.responses[String(status)].headers ?? {}).map((n) => n.toLowerCase());
    const required = (status: number) =>
      Object.entries(doc.paths[PATH].get.responses[String(status)].headers ?? {}).filter(([, h]) => (h as Json).required).map(([n]) => n.toLowerCase());
    const JAN = `${PATH}?month_from=2024-01-01&month_to=2024-01-31&segment=all`;
    const first = await app.get(JAN, { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" });
    await first.arrayBuffer();
    const etag = first.headers.get("etag")!;
    const cases: [number, Record<string, string>, string?][] = [
      [200, { "accept-encoding": "identity" }],
      [200, { accept: "text/csv", "accept-encoding": "identity" }],
      [200, { "accept-encoding": "gzip" }],
      [200, { "accept-encoding": "identity" }, "HEAD"],
      [304, { "accept-encoding": "identity", "if-none-match": etag }],
      [304, { "accept-encoding": "identity", "if-none-match": etag }, "HEAD"],
      [412, { "if-match": '"nope"' }],
    ];
    for (const [status, headers, method = "GET"] of cases) {
      const res = await app.handle(new Request(`http://localhost${JAN}`, { method, headers: { authorization: `Bearer ${KEY}`, ...headers } }));
      await res.arrayBuffer();
      expect({ status: res.status, method, headers }).toEqual({ status, method, headers });
      for (const name of sent(res)) expect([status, headers, name, declared(status)]).toEqual([status, headers, name, expect.arrayContaining([name])]);
      for (const name of required(status)) expect([status, name, res.headers.has(name)]).toEqual([status, name, true]);
    }
  });

  test("a 422 item has only documented fields and every required one", async () => {
    const res = await app.get(`${PATH}?month_from=2024-13-01&segment=x`);
    expect(res.status).toBe(422);
    const items = ((await res.json()) as Json).detail as Json[];
    const item = doc.components.schemas.ValidationError;
    expect(items.length).toBe(3);
    for (const it of items) {
      for (const key of Object.keys(it)) expect(Object.keys(item.properties)).toContain(key);
      for (const key of item.required) expect(Object.keys(it)).toContain(key);
    }
  });
});

describe("Swagger UI at /docs works without internet access", () => {
  const app = testApp(noDatabase(), { keys: ring(KEY) });
  const modules = resolve(import.meta.dir, "../../node_modules/swagger-ui-dist");

  test("the page loads its script and stylesheet from this service only, and its CSP allows no other origin", async () => {
    const res = await app.get("/docs", {});
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(
      "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
        "connect-src 'self'; font-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    );
    expect(html).not.toMatch(/https?:|\/\/[a-z0-9.-]+\.[a-z]{2,}/i);
    // Relative to /docs, so that a reverse proxy may serve the service under a sub-path.
    expect([...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1])).toEqual(["docs/assets/swagger-ui-bundle.js"]);
    expect([...html.matchAll(/<link rel="stylesheet" href="([^"]+)"/g)].map((m) => m[1])).toEqual(["docs/assets/swagger-ui.css"]);
    expect(html).toContain('SwaggerUIBundle({"dom_id":"#swagger-ui","url":"openapi.json","deepLinking":true,"validatorUrl":"none","persistAuthorization":false})');
    for (const [base, expected] of [["http://h/docs", "http://h/openapi.json"], ["https://h/costs/docs", "https://h/costs/openapi.json"]] as const) {
      expect(new URL("openapi.json", base).toString()).toBe(expected);
    }
  });

  test("/docs/ (where relative URLs would miss) is sent to /docs, relatively, keeping a proxy's sub-path", async () => {
    const res = await app.get("/docs/", {});
    expect([res.status, res.headers.get("location"), await res.text()]).toEqual([307, "../docs", ""]);
    expect(new URL("../docs", "https://h/costs/docs/").toString()).toBe("https://h/costs/docs");
  });

  test("DOCS_ENABLED=false: /docs, its assets and /openapi.json answer 404", async () => {
    const off = testApp(noDatabase(), { keys: ring(KEY), docsEnabled: false });
    for (const path of ["/docs", "/docs/", "/docs/assets/swagger-ui.css", "/openapi.json"]) {
      const res = await off.get(path, {});
      expect([path, res.status, await res.text()]).toEqual([path, 404, '{"detail":"Not Found"}']);
    }
  });

  test.each([
    ["/docs/assets/swagger-ui-bundle.js", "swagger-ui-bundle.js", "text/javascript; charset=utf-8"],
    ["/docs/assets/swagger-ui.css", "swagger-ui.css", "text/css; charset=utf-8"],
  ])("%s serves Swagger UI's own %s", async (path, file, type) => {
    const res = await app.get(path, {});
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe(type);
    expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(await Bun.file(`${modules}/${file}`).arrayBuffer()))).toBe(true);
  });
});
