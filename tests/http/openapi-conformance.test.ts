// Every answer of the product-costs route is what /openapi.json declares, checked the way
// schemathesis checks a service: requests generated from the document the service itself
// serves (fast-check, a fixed seed), each answer held against the document by a validator
// nobody here wrote (ajv with ajv-formats): its status, every header it sends, the content
// type and the body. The requests mix valid and invalid query values, missing, unknown and
// repeated parameters, the conditional headers with the current, a wrong, a weak and a
// garbage tag, good, wrong and missing keys, JSON and CSV (Excel variant too), identity,
// gzip and br, GET and HEAD, each method against its own operation of the document.

import { afterAll, beforeAll, expect, test } from "bun:test";
import Ajv, { type ValidateFunction } from "ajv";
import addFormats from "ajv-formats";
import fc from "fast-check";
import { brotliDecompressSync, gunzipSync } from "node:zlib";
import { tableFromIPC } from "apache-arrow";
import { KEY, ring, testApp, type TestApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { loadFixture, type DailyCostFixture, type ProductFixture } from "../support/fixtures.ts";
import { parseCsv } from "../support/parse-csv.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const ARROW = "application/vnd.apache.arrow.stream";

type Json = Record<string, any>;
const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const PATH = "/external/v1/product-costs";

// Fixed so that a failure replays; fast-check prints the seed and the shrunk request on
// failure. CONFORMANCE_SEED and CONFORMANCE_RUNS explore further by hand;
// CONFORMANCE_VERBOSE=1 prints how many answers of each kind the run checked.
const SEED = Number(process.env.CONFORMANCE_SEED ?? 20261127);
const RUNS = Number(process.env.CONFORMANCE_RUNS ?? 400);

/**
 * Headers a response may carry without the document naming them, each for a reason:
 * Content-Type is the `content` map's business (OpenAPI 3.0: a header named Content-Type
 * "SHALL be ignored"), checked against it below; Content-Length frames the message
 * (RFC 9112 §6) and Date is every origin server's duty (RFC 9110 §6.6.1), both the HTTP
 * layer's, not the API's.
 */
const TRANSPORT_HEADERS = new Set(["content-type", "content-length", "date"]);

// The endpoint tests' fixture, and enough more products that most answers pass the 1 KiB
// below which nothing is compressed (some named like formulas, for the Excel variant).
const MORE_PRODUCTS: ProductFixture[] = Array.from({ length: 24 }, (_, i) => ({
  product_id: 100 + i,
  erp_product_id: 2000 + i,
  erp_sku: `SKU-X${i}`,
  product_name: i % 3 === 0 ? `=HYPERLINK("x${i}")` : `Extra ${i}`,
  is_sample: i % 4 === 0,
}));
const MORE_DAILY: DailyCostFixture[] = MORE_PRODUCTS.map((p, i) => ({
  product_id: p.product_id,
  cost_date: isoDay(Date.UTC(2024, 0, 1 + i * 3)),
  purchase_cost_usd: `${i}.5`,
  inbound_freight_usd: i % 2 ? null : "1",
  shipping_to_customer_usd: "0",
  warehouse_fees_usd: `-${i}`,
}));

// The fixtures' days run from 2023-12-31 to 2024-03-10: dates a month either side reach
// empty, partial and whole answers.
const FIRST_DAY = Date.UTC(2023, 10, 25);
const LAST_DAY = Date.UTC(2024, 3, 5);

/**
 * ajv over the document's schemas: OpenAPI 3.0's `nullable` is one of ajv's own keywords;
 * `example` is an annotation ajv's strict mode would otherwise reject; formats (date,
 * date-time) from ajv-formats.
 */
function documentValidator(doc: Json) {
  const ajv = new Ajv({ strict: true, allErrors: true });
  addFormats(ajv);
  // The document's own word for an exact decimal: a JSON number, here read as JavaScript reads it.
  ajv.addFormat("decimal", { type: "number", validate: (n: number) => Number.isFinite(n) });
  ajv.addVocabulary(["example"]);
  // Refs point into the document's components: served to ajv as one schema of their own.
  const withRefs = (schema: object): object =>
    JSON.parse(JSON.stringify(schema).replaceAll('"#/components/schemas/', '"openapi.json#/$defs/'));
  ajv.addSchema({ $id: "openapi.json", $defs: withRefs(doc.components.schemas) });
  const compiled = new Map<object, ValidateFunction>();
  return (schema: object, value: unknown): string[] => {
    let validate = compiled.get(schema);
    if (!validate) compiled.set(schema, (validate = ajv.compile(withRefs(schema))));
    return validate(value) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
  };
}

/**
 * The set-ups whose answers differ in what they may say: the usual one, one with no key
 * configured (503 EXTERNAL_API_NOT_CONFIGURED), one serving the embedded demo data (every
 * answer says X-Demo-Data).
 */
type Service = "keyed" | "no key configured" | "demo data";

/** Query parameters or header fields, in order, a name possibly repeated. */
type Pairs = [string, string][];

/** A request as generated, before the current ETag is known. */
interface Generated {
  /** Which of the service's set-ups answers: see SERVICES. */
  service: Service;
  method: "GET" | "HEAD";
  query: Pairs;
  auth: string | undefined;
  accept: string | undefined;
  acceptEncoding: string | undefined;
  conditions: Pairs;
}

/** Stands for the current ETag of what the request asks for, known only when it is sent. */
const CURRENT = "{current}";
/** Stands for a value that takes the target past 64 KiB (spelt out only when sent, so that a counterexample stays readable). */
const LONG = "{70000 x}";

/** Values the declared schema accepts: a date in the fixture's range, or one of the enum. */
function validValue(schema: Json): fc.Arbitrary<string> {
  if (schema.enum) return fc.constantFrom(...(schema.enum as string[]));
  if (schema.format === "date") return fc.integer({ min: FIRST_DAY / 86_400_000, max: LAST_DAY / 86_400_000 }).map((d) => isoDay(d * 86_400_000));
  return fc.string();
}

/** Values the declared schema refuses: a near miss of the format or the enum, or anything else. */
function invalidValue(schema: Json): fc.Arbitrary<string> {
  const near = schema.enum
    ? fc.constantFrom(...(schema.enum as string[]).flatMap((v) => [v.toUpperCase(), ` ${v}`, `${v}s`]), "", "none")
    : fc.constantFrom("2024-13-01", "2024-02-30", "2024-1-05", "20240105", "2024-01-05T00:00:00Z", "", "yesterday", "0000-01-01");
  const refused = (v: string) => (schema.enum ? !schema.enum.includes(v) : !/^\d{4}-\d{2}-\d{2}$/.test(v));
  return fc.oneof(near, fc.string({ maxLength: 12 }).filter(refused));
}

/** One query parameter: usually valid, sometimes invalid, left out, or repeated. */
function queryParameter(p: Json): fc.Arbitrary<Pairs> {
  return fc.oneof(
    { weight: 16, arbitrary: validValue(p.schema).map((v) => [[p.name, v]] as Pairs) },
    { weight: 1, arbitrary: invalidValue(p.schema).map((v) => [[p.name, v]] as Pairs) },
    { weight: 1, arbitrary: fc.constant([] as Pairs) },
    { weight: 1, arbitrary: fc.tuple(validValue(p.schema), fc.oneof(validValue(p.schema), invalidValue(p.schema))).map(([a, b]) => [[p.name, a], [p.name, b]] as Pairs) },
  );
}

/** A header parameter of the document's (If-None-Match, If-Match), absent two times in three: entity-tag lists of every kind. */
function conditionalValue(): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    { weight: 3, arbitrary: fc.constantFrom(CURRENT, `W/${CURRENT}`, `"nope", ${CURRENT}`, '"nope"', 'W/"nope"', "*", "garbage", '"unterminated', "") },
  );
}

/**
 * Most requests name their dates in ascending order, as the descriptions ask (month_to not
 * before month_from), so that most reach the data; the rest stay as drawn (400).
 */
function inOrder(query: Json[], pairs: Pairs): Pairs {
  const dated = new Set(query.filter((p) => p.schema.format === "date").map((p) => p.name));
  const at = pairs.flatMap(([n, v], i) => (dated.has(n) && /^\d{4}-\d{2}-\d{2}$/.test(v) ? [i] : []));
  const sorted = at.map((i) => pairs[i]![1]).sort();
  return pairs.map(([n, v], i) => (at.includes(i) ? [n, sorted[at.indexOf(i)]!] : [n, v]));
}

function requests(doc: Json): fc.Arbitrary<Generated> {
  const op = doc.paths[PATH].get;
  const query = op.parameters.filter((p: Json) => p.in === "query");
  const headers = op.parameters.filter((p: Json) => p.in === "header");
  const types = Object.keys(op.responses["200"].content);
  return fc.record({
    service: fc.oneof(
      { weight: 8, arbitrary: fc.constant<Service>("keyed") },
      { weight: 1, arbitrary: fc.constantFrom<Service>("no key configured", "demo data") },
    ),
    method: fc.constantFrom("GET", "HEAD"),
    query: fc
      .tuple<Pairs[]>(
        ...query.map(queryParameter),
        // Parameters the document does not know, and now and then a target past the 64 KiB limit.
        fc.oneof(
          { weight: 16, arbitrary: fc.constant([] as Pairs) },
          { weight: 2, arbitrary: fc.tuple(fc.constantFrom("foo", "Segment", "month", "month_from[]"), fc.string({ maxLength: 8 })).map((kv) => [kv]) },
          { weight: 1, arbitrary: fc.constant([["pad", LONG]] as Pairs) },
        ),
      )
      .chain((parts) => fc.constantFrom(true, true, true, false).map((ordered) => (ordered ? inOrder(query, parts.flat()) : parts.flat()))),
    auth: fc.oneof(
      { weight: 6, arbitrary: fc.constant(`Bearer ${KEY}`) },
      { weight: 1, arbitrary: fc.constantFrom("Bearer not-a-key", `Basic ${KEY}`, "Bearer ", undefined) },
    ),
    accept: fc.option(
      fc.constantFrom(...types, ...types.map((t) => `${t};q=0.5`), "text/csv; variant=excel", "*/*", "text/*;q=0.9, application/json;q=0.5", "application/xml", "text/csv;q=0, */*"),
      { nil: undefined },
    ),
    acceptEncoding: fc.option(fc.constantFrom("identity", "gzip", "br", "gzip, br", "br;q=0, gzip", "*", "compress"), { nil: undefined }),
    conditions: fc
      .tuple<[string, string | undefined][]>(...headers.map((h: Json) => conditionalValue().map((v): [string, string | undefined] => [h.name, v])))
      .map((pairs) => pairs.filter((pair): pair is [string, string] => pair[1] !== undefined)),
  });
}

/** Where the document's responses of `op` name `status` (exactly, or as 4XX, or default). */
function declaredResponse(op: Json, status: number): Json | undefined {
  return op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
}

const essence = (contentType: string) => contentType.split(";")[0]!.trim().toLowerCase();

/** The body's bytes as the representation, its content coding undone. */
function decoded(bytes: Uint8Array, coding: string | null): Uint8Array {
  if (coding === null) return bytes;
  if (coding === "gzip") return gunzipSync(bytes);
  if (coding === "br") return brotliDecompressSync(bytes);
  throw new Error(`a content coding nobody asked for: ${coding}`);
}

describeBackends("every answer of the route is what /openapi.json declares, on $name", (backend) => {
  let db: BackendHandle;
  let apps: Record<Service, TestApp>;
  let doc: Json;
  let op: Json;
  /** The document's operation for each method generated: HEAD has its own. */
  let ops: Record<Generated["method"], Json>;
  let check: ReturnType<typeof documentValidator>;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, [...PRODUCTS, ...MORE_PRODUCTS], [...DAILY, ...MORE_DAILY]);
    apps = {
      keyed: testApp(db.service, { keys: ring(KEY) }),
      "no key configured": testApp(db.service, { keys: ring() }),
      "demo data": testApp(db.service, { keys: ring(KEY), demoData: true }),
    };
    // The document as clients get it, not as the source spells it.
    doc = (await (await apps.keyed.get("/openapi.json", {})).json()) as Json;
    op = doc.paths[PATH].get;
    ops = { GET: op, HEAD: doc.paths[PATH].head };
    if (!ops.HEAD) throw new Error(`/openapi.json declares no HEAD of ${PATH}`);
    check = documentValidator(doc);
  });
  afterAll(async () => {
    await db.close();
  });

  async function send(service: Service, method: string, query: Pairs, headers: Record<string, string | undefined>) {
    const target = `${PATH}?${new URLSearchParams(query.map(([n, v]): [string, string] => [n, v === LONG ? "x".repeat(70_000) : v]))}`;
    const defined = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined)) as Record<string, string>;
    const res = await apps[service].handle(new Request(`http://localhost${target}`, { method, headers: defined }));
    return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
  }

  /** What is wrong with one answer, measured against the document; empty when nothing is. */
  async function mismatches(req: Generated, conditions: Record<string, string>, res: Response, bytes: Uint8Array): Promise<string[]> {
    const problems: string[] = [];
    const declared = declaredResponse(ops[req.method], res.status);
    if (!declared) return [`status ${res.status} is not declared`];
    const headers = Object.fromEntries(Object.entries((declared.headers ?? {}) as Record<string, Json>).map(([n, h]) => [n.toLowerCase(), h]));
    for (const [name, value] of res.headers) {
      if (TRANSPORT_HEADERS.has(name)) continue;
      const header = headers[name];
      if (!header) {
        problems.push(`header ${name} is not declared for ${res.status}`);
        continue;
      }
      // A header's value is text; a number-typed schema means its digits.
      const typed = header.schema.type === "integer" && /^\d+$/.test(value) ? Number(value) : value;
      for (const e of check(header.schema, typed)) problems.push(`header ${name}: ${JSON.stringify(value)} ${e}`);
    }
    for (const [name, header] of Object.entries(headers)) if (header.required && !res.headers.has(name)) problems.push(`required header ${name} is missing`);
    if (req.method === "HEAD") {
      // Bun's server writes no body to HEAD whatever the handler returns (RFC 9110 §9.3.2; on
      // the wire in head-on-the-wire.test.ts): the 414, answered before routing, still holds
      // its body in process, and only there.
      if (bytes.length && res.status !== 414) problems.push(`HEAD with a body of ${bytes.length} bytes`);
      if (declared.content) problems.push(`HEAD's ${res.status} declares content`);
      // No content declared, yet a Content-Type: the one the GET's response of this status
      // declares for the representation (as the HEAD operation's description says).
      const type = res.headers.get("content-type");
      const represented = (declaredResponse(ops.GET, res.status)?.content ?? {}) as Record<string, Json>;
      if (type === null ? Object.keys(represented).length > 0 : !represented[essence(type)]) {
        problems.push(`content-type ${type} where the GET's ${res.status} declares ${Object.keys(represented).join(", ") || "none"}`);
      }
      if (res.status === 200 && type !== null) problems.push(...okHeadersAsDescribed(req, res, type));
      problems.push(...(await headDiffers(req, conditions, res)));
      return problems;
    }

    const type = res.headers.get("content-type");
    const content = (declared.content ?? {}) as Record<string, Json>;
    if (Object.keys(content).length === 0) {
      if (type !== null) problems.push(`content-type ${type} where ${res.status} declares no content`);
      if (bytes.length) problems.push(`a body of ${bytes.length} bytes where ${res.status} declares none`);
      return problems;
    }
    const media = type === null ? undefined : content[essence(type)];
    if (!media) return [...problems, `content-type ${type} is not one of ${Object.keys(content)} for ${res.status}`];
    if (res.status === 200) problems.push(...okHeadersAsDescribed(req, res, type!));
    if (essence(type!) === ARROW) return [...problems, ...(await arrowMismatches(req, media, decoded(bytes, res.headers.get("content-encoding"))))];
    // ignoreBOM keeps a byte order mark in the text (the default drops it): the Excel variant must have one.
    const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(decoded(bytes, res.headers.get("content-encoding")));
    if (essence(type!) === "application/json") {
      for (const e of check(media.schema, JSON.parse(text))) problems.push(`body ${e}`);
    } else if (essence(type!) === "text/csv") {
      problems.push(...(await csvMismatches(req, media, type!, text)));
    } else {
      problems.push(`no check for ${type}`);
    }
    return problems;
  }

  /**
   * What the 200's header descriptions promise beyond their schemas: Content-Disposition on
   * CSV and Arrow only, and a Content-Encoding only that the request's Accept-Encoding accepts.
   */
  function okHeadersAsDescribed(req: Generated, res: Response, type: string): string[] {
    const problems: string[] = [];
    if ((essence(type) === "text/csv" || essence(type) === ARROW) !== res.headers.has("content-disposition")) problems.push(`Content-Disposition ${res.headers.get("content-disposition")} with ${type}`);
    const coding = res.headers.get("content-encoding");
    const accepted = (req.acceptEncoding ?? "").split(",").some((element) => {
      const [name = "", ...params] = element.split(";").map((p) => p.trim().toLowerCase());
      return (name === coding || name === "*") && !params.some((p) => /^q=0(\.0*)?$/.test(p));
    });
    if (coding !== null && !accepted) problems.push(`Content-Encoding ${coding} for Accept-Encoding ${req.acceptEncoding}`);
    return problems;
  }

  /**
   * HEAD against the GET it stands for (RFC 9110 §9.3.2): the same status, header names and
   * representation (type, coding, tag, file name); only the HTTP layer's headers and the
   * request's id may differ.
   */
  async function headDiffers(req: Generated, conditions: Record<string, string>, head: Response): Promise<string[]> {
    const { res: get } = await send(req.service, "GET", req.query, { authorization: req.auth, accept: req.accept, "accept-encoding": req.acceptEncoding, ...conditions });
    const names = (r: Response) => [...r.headers.keys()].filter((n) => !TRANSPORT_HEADERS.has(n) || n === "content-type").sort().join(", ");
    const said = (r: Response) => [r.status, names(r), ...["content-type", "content-encoding", "etag", "content-disposition"].map((n) => r.headers.get(n))].join(" | ");
    return said(head) === said(get) ? [] : [`HEAD says ${said(head)}; GET says ${said(get)}`];
  }

  /**
   * A CSV body against what the document says of it: text (its schema), the header line of
   * its example first (behind a byte order mark in the Excel variant, as its description
   * says), CRLF line ends, every record as wide as the header, and as many records as the
   * JSON answer of the same request has rows.
   */
  async function csvMismatches(req: Generated, media: Json, type: string, text: string): Promise<string[]> {
    const problems = check(media.schema, text).map((e) => `body ${e}`);
    const header = (media.example as string).split("\r\n")[0]!;
    const excel = /;\s*variant=excel/.test(type);
    const bom = "\uFEFF";
    if (excel !== text.startsWith(bom)) problems.push(`byte order mark ${excel ? "missing" : "unexpected"}`);
    const body = excel ? text.slice(1) : text;
    if (!body.startsWith(`${header}\r\n`)) problems.push(`CSV header line is ${JSON.stringify(body.split("\n")[0])}`);
    if (!body.endsWith("\r\n")) problems.push("CSV does not end with CRLF");
    const records = parseCsv(body);
    const width = header.split(",").length;
    for (const r of records) if (r.fields.length !== width) problems.push(`CSV line ${r.line} has ${r.fields.length} fields`);
    const json = await send(req.service, "GET", req.query, { authorization: req.auth, accept: "application/json", "accept-encoding": "identity" });
    const rows = JSON.parse(new TextDecoder().decode(json.bytes)) as unknown[];
    if (records.length - 1 !== rows.length) problems.push(`${records.length - 1} CSV records, ${rows.length} JSON rows`);
    return problems;
  }

  /**
   * An Arrow stream against what the document says of it: a stream whose fields are the JSON
   * row's properties in their order, with the types its description names, and as many rows
   * as the JSON answer of the same request.
   */
  async function arrowMismatches(req: Generated, media: Json, bytes: Uint8Array): Promise<string[]> {
    const problems: string[] = [];
    if (media.schema.format !== "binary") problems.push(`Arrow's schema is not binary`);
    let table;
    try {
      table = tableFromIPC(bytes);
    } catch (err) {
      return [`not an Arrow IPC stream: ${err}`];
    }
    const fields = table.schema.fields.map((f) => `${f.name}:${f.type}`);
    const properties = Object.keys(doc.components.schemas.ProductCostRow.properties);
    const expected = properties.map((name, i) => `${name}:${i === 0 ? "Int64" : i <= 2 ? "Utf8" : "Decimal[38e+6]"}`);
    if (fields.join() !== expected.join()) problems.push(`Arrow fields ${fields.join()}, not ${expected.join()}`);
    const json = await send(req.service, "GET", req.query, { authorization: req.auth, accept: "application/json", "accept-encoding": "identity" });
    const rows = JSON.parse(new TextDecoder().decode(json.bytes)) as unknown[];
    if (table.numRows !== rows.length) problems.push(`${table.numRows} Arrow rows, ${rows.length} JSON rows`);
    return problems;
  }

  test(`${RUNS} generated requests (seed ${SEED}): status, headers, content type and body as declared`, async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(requests(doc), async (req) => {
        // The current tag of the representation this request asks for, from the same request without conditions.
        let current = '"no-current-tag"';
        if (req.conditions.some(([, v]) => v.includes(CURRENT))) {
          const plain = await send(req.service, "GET", req.query, { authorization: req.auth, accept: req.accept, "accept-encoding": req.acceptEncoding });
          current = plain.res.headers.get("etag") ?? current;
        }
        const conditions = Object.fromEntries(req.conditions.map(([n, v]) => [n, v.replace(CURRENT, current)]));
        const { res, bytes } = await send(req.service, req.method, req.query, { authorization: req.auth, accept: req.accept, "accept-encoding": req.acceptEncoding, ...conditions });
        const label = `${req.method} ${res.status}${res.headers.get("content-encoding") ? " " + res.headers.get("content-encoding") : ""} ${essence(res.headers.get("content-type") ?? "-")}`;
        seen.set(label, (seen.get(label) ?? 0) + 1);
        const problems = await mismatches(req, conditions, res, bytes);
        // A wrong key is refused, whatever else the request says (a target too long is refused before it is read).
        const keyed = req.service !== "no key configured";
        if (keyed && req.auth !== `Bearer ${KEY}` && res.status !== 401 && res.status !== 414) problems.push(`${res.status} for the key ${JSON.stringify(req.auth)}`);
        expect({ status: res.status, problems }).toEqual({ status: res.status, problems: [] });
      }),
      { seed: SEED, numRuns: RUNS },
    );
    if (process.env.CONFORMANCE_VERBOSE) console.log(Object.fromEntries([...seen].sort()));
    // The generator reached the answers worth checking (a change that starves one fails here, not silently).
    const labels = [...seen.keys()].join(" | ");
    for (const wanted of [/GET 200 (gzip |br )?application\/json/, /GET 200 (gzip |br )?text\/csv/, /HEAD 200/, / 304 /, / 412 /, / 401 /, / 422 /, / 400 /, / 414 /, / 503 /, /GET 200 (gzip|br) /]) {
      expect(labels).toMatch(wanted);
    }
  }, 60_000);
});
