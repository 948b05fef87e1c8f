// Generated hostile requests (fast-check) and the one contract every answer must keep:
// never a 5xx, and a body that is JSON of a documented shape. Shared by the in-process
// property test and the one against the compiled executable over raw sockets.

import fc from "fast-check";
import zlib from "node:zlib";

export const PATH = "/external/v1/product-costs";

export interface HostileRequest {
  method: string;
  /** The request target as sent: path and query, any bytes (latin1 string). */
  target: string;
  headers: [string, string][];
  /** On the wire only: the Host header's value, null for none at all. */
  host: string | null;
  /** On the wire only: the request line's version ("" for none). */
  version: string;
  /** On the wire only: how the target is written in the request line. */
  form: "origin" | "absolute" | "authority" | "asterisk";
}

const hex = (b: number) => b.toString(16).padStart(2, "0").toUpperCase();

/** Query text: valid dates, junk, percent-escapes of arbitrary bytes, broken escapes, huge values. */
const queryValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom("2024-01-01", "2024-01-31", "2024-1-1", "2024-02-30", "1704067200", "2024-01-01T00:00:00Z", "normal", "sample", "all", "") },
  { weight: 3, arbitrary: fc.date({ min: new Date("1900-01-01"), max: new Date("2200-01-01"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10)) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }).map(encodeURIComponent) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 24 }).map((bytes) => [...bytes].map((b) => "%" + hex(b)).join("")) },
  { weight: 2, arbitrary: fc.constantFrom("%", "%zz", "%f", "%%", "%E2%82", "%FF%FE", "+", "++2024-01-01", "%00", "%0d%0a", "a=b=c", "%26segment%3Dall") },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => "9".repeat(n)) },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom("'", '"', ";", "-", "\\", "(", ")", "*", "/", "$", "1"), maxLength: 30 }).map(encodeURIComponent) },
);

const queryKey: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom("month_from", "month_to", "segment") },
  { weight: 2, arbitrary: fc.constantFrom("MONTH_FROM", "month_from[]", "month_from%00", "segment ", "", "__proto__", "constructor") },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 12 }).map(encodeURIComponent) },
);

const validDate = fc.date({ min: new Date("2023-06-01"), max: new Date("2024-06-30"), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 10));

const junkQuery: fc.Arbitrary<string> = fc
  .array(fc.tuple(queryKey, queryValue, fc.boolean()), { maxLength: 8 })
  .map((pairs) => pairs.map(([k, v, withEq]) => (withEq || v ? `${k}=${v}` : k)).join("&"));

// Half the queries are well formed (so the database path is exercised) with junk around them.
const query: fc.Arbitrary<string> = fc.oneof(
  junkQuery,
  fc
    .tuple(junkQuery, validDate, validDate, fc.constantFrom("", "&segment=all", "&segment=sample", "&segment=normal"), junkQuery)
    .map(([before, a, b, segment, after]) => [before, `month_from=${a < b ? a : b}&month_to=${a < b ? b : a}${segment}`, after].filter(Boolean).join("&")),
);

const path: fc.Arbitrary<string> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(PATH) },
  { weight: 1, arbitrary: fc.constantFrom("/healthz", "/readyz", "/", "/external/v1/product-costs/", "/external/v1/product-costs//", "/EXTERNAL/v1/product-costs", "/external/v1/product-costs%2F", "/external/v1/../v1/product-costs", "/external/v2/product-costs", "/external/v1/product-costs;x=1") },
  { weight: 1, arbitrary: fc.array(fc.string({ unit: "grapheme-ascii", maxLength: 8 }).map(encodeURIComponent), { maxLength: 4 }).map((s) => "/x/" + s.join("/")) },
);

/** Header values are bytes: Latin-1 without CR, LF and NUL (what can be sent at all). */
const headerText = (maxLength: number) =>
  fc.string({ unit: fc.integer({ min: 1, max: 255 }).filter((c) => c !== 10 && c !== 13).map((c) => String.fromCharCode(c)), maxLength });

const authorization: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("Bearer ${KEY}") },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constantFrom("bearer ${KEY}", "BEARER   ${KEY}  ", "Bearer", "Bearer ", "Basic ${KEY}", "${KEY}", "Bearer ${KEY}x", "Bearer ${KEY}, Bearer other") },
  { weight: 1, arbitrary: headerText(60).map((t) => "Bearer " + t) },
  { weight: 1, arbitrary: fc.integer({ min: 1000, max: 70_000 }).map((n) => "Bearer " + "k".repeat(n)) },
);

const oddHeader: fc.Arbitrary<[string, string]> = fc.oneof(
  fc.tuple(fc.constantFrom("x-request-id", "accept", "accept-encoding", "content-type", "cookie", "x-forwarded-for", "origin", "range", "if-none-match", "expect"), headerText(80)),
  fc.tuple(fc.constantFrom("accept"), fc.constantFrom("text/csv", "application/json", "*/*", "text/csv;q=0", "text/*, application/json;q=0.1", "")),
  fc.tuple(fc.constantFrom("accept-encoding"), fc.constantFrom("gzip", "br", "br;q=0, gzip", "*", "identity;q=0", "zstd")),
  fc.tuple(fc.stringMatching(/^x-[a-z0-9-]{1,20}$/), headerText(200)),
  fc.tuple(fc.constant("x-huge"), fc.integer({ min: 1000, max: 70_000 }).map((n) => "h".repeat(n))),
);

/** Host headers: mostly plain, often broken in the ways that once stopped the service (empty, bad port, space, unclosed bracket). */
const host: fc.Arbitrary<string | null> = fc.oneof(
  { weight: 5, arbitrary: fc.constant("127.0.0.1") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      null, "", " ", "a:99999", "a:-1", "a b", "[::1", "[::1]", "[::1]:8080", ":80", "a:", "1.2.3.4.5", "xn--", "x", "user@evil",
      "a/b?c", "a\\b", "%zz", "a#b", "localhost:0", "\u00e9vil", "a\tb", "..", "[", "]", "a,b", "evil.example", "127.0.0.1:8080:80",
    ),
  },
  { weight: 1, arbitrary: headerText(40) },
);

const version = fc.oneof(
  { weight: 8, arbitrary: fc.constant("HTTP/1.1") },
  { weight: 3, arbitrary: fc.constant("HTTP/1.0") },
  { weight: 1, arbitrary: fc.constantFrom("HTTP/1.2", "HTTP/2.0", "http/1.1", "HTTP/0.9", "", "HTTP/1.1 extra") },
);

const form = fc.oneof(
  { weight: 12, arbitrary: fc.constant("origin" as const) },
  { weight: 2, arbitrary: fc.constant("absolute" as const) },
  { weight: 1, arbitrary: fc.constantFrom("authority" as const, "asterisk" as const) },
);

export const METHODS_IN_PROCESS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "PROPFIND", "FOO", "get"];
/** Methods fetch() refuses to build but a client can send on the wire. */
export const METHODS_ON_THE_WIRE = [...METHODS_IN_PROCESS, "TRACE", "TRACK", "CONNECT", "M-SEARCH", "PRI"];

export function hostileRequest(methods: readonly string[], key: string): fc.Arbitrary<HostileRequest> {
  return fc
    .record({
      method: fc.oneof({ weight: 6, arbitrary: fc.constant("GET") }, { weight: 4, arbitrary: fc.constantFrom(...methods) }),
      path,
      query: fc.option(query, { freq: 8, nil: null }),
      authorization,
      extra: fc.array(oddHeader, { maxLength: 4 }),
      host,
      version,
      form,
    })
    .map(({ method, path, query, authorization, extra, host, version, form }) => {
      const headers: [string, string][] = [];
      if (authorization !== null) headers.push(["authorization", authorization.replaceAll("${KEY}", key)]);
      headers.push(...extra);
      return { method, target: path + (query === null ? "" : "?" + query), headers, host, version, form };
    });
}

export interface Answer {
  status: number;
  headers: Headers;
  body: Uint8Array;
}

function decoded(answer: Answer): string {
  const coding = answer.headers.get("content-encoding");
  const bytes =
    coding === "gzip" ? zlib.gunzipSync(answer.body) : coding === "br" ? zlib.brotliDecompressSync(answer.body) : Buffer.from(answer.body);
  return new TextDecoder().decode(bytes);
}

const ROW_KEYS = "erp_product_id,erp_sku,product_name,purchase_cost_usd,inbound_freight_usd,shipping_to_customer_usd,warehouse_fees_usd";
const isDetailItem = (x: unknown) =>
  typeof x === "object" && x !== null && ["type", "loc", "msg", "input"].every((k) => k in x) && Object.keys(x).every((k) => ["type", "loc", "msg", "input", "ctx"].includes(k));

/**
 * The contract: a problem description, or null when the answer keeps it. `wire`: the answer
 * came over HTTP, where a HEAD answer has no body (in process the app's body is still there).
 */
export function contractBreach(request: HostileRequest, answer: Answer, wire = false): string | null {
  const { status } = answer;
  if (status >= 500) return `status ${status}`;
  if ((wire && request.method === "HEAD") || status === 307) {
    return answer.body.length === 0 ? null : `${status} to ${request.method} with a body`;
  }
  if (request.method === "HEAD" && answer.body.length === 0) return null;
  if (status === 304) {
    // A valid request whose If-None-Match is `*` (random text can be, a current ETag cannot): no body.
    const conditional = request.headers.some(([k, v]) => k.toLowerCase() === "if-none-match" && v.trim() === "*");
    return conditional && answer.body.length === 0 ? null : "304 to a request that did not name the current state";
  }
  const type = answer.headers.get("content-type") ?? "";
  const text = decoded(answer);
  if (status === 200 && type.startsWith("text/csv")) {
    return text.startsWith(ROW_KEYS + "\r\n") ? null : "CSV without its header line";
  }
  if (type !== "application/json") return `content-type ${JSON.stringify(type)} with status ${status}`;
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `status ${status} with a body that is not JSON`;
  }
  if (status === 200) {
    if (Array.isArray(body)) {
      return body.every((row) => Object.keys(row).join(",") === ROW_KEYS) ? null : "a row without the seven fields";
    }
    const detail = (body as { detail?: unknown }).detail;
    return detail === "OK" || detail === "READY" ? null : "200 with an unexpected body";
  }
  if (typeof body !== "object" || body === null || Object.keys(body).join() !== "detail") return `status ${status} without {"detail": …}`;
  const detail = (body as { detail: unknown }).detail;
  if (typeof detail === "string") return null;
  if (status === 422 && Array.isArray(detail) && detail.length > 0 && detail.every(isDetailItem)) return null;
  return `status ${status} with detail ${JSON.stringify(detail).slice(0, 100)}`;
}

/** Over the wire, some percent-escapes are sent as the raw bytes they stand for (spaces, controls, high bytes). */
export function rawBytesVariant(target: string, seed: number): string {
  if (seed % 4 !== 0) return target;
  return target.replace(/%([0-9A-F]{2})/g, (m, h: string, i: number) => ((i + seed) % 2 === 0 ? String.fromCharCode(parseInt(h, 16)) : m));
}

/** The target as the request line writes it in `r.form`. */
export function wireTarget(r: HostileRequest): string {
  switch (r.form) {
    case "origin":
      return r.target;
    case "absolute":
      return "http://other.example" + r.target;
    case "authority":
      return "other.example:443";
    case "asterisk":
      return "*";
  }
}

export function serialize(r: HostileRequest): Buffer {
  const line = `${r.method} ${wireTarget(r)}${r.version ? " " + r.version : ""}`;
  const head = [line, ...(r.host === null ? [] : [`Host: ${r.host}`]), ...r.headers.map(([k, v]) => `${k}: ${v}`), "Connection: close"];
  return Buffer.from(head.join("\r\n") + "\r\n\r\n", "latin1");
}

/** Parses a whole HTTP/1.1 answer read until the server closed (chunked bodies decoded). */
export function parseAnswer(raw: Buffer): Answer | null {
  const split = raw.indexOf("\r\n\r\n");
  if (split === -1) return null;
  const lines = raw.subarray(0, split).toString("latin1").split("\r\n");
  const status = Number(lines[0]!.split(" ")[1]);
  const headers = new Headers();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  let body = raw.subarray(split + 4);
  if (headers.get("transfer-encoding")?.includes("chunked")) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf("\r\n", at);
      if (eol === -1) return null; // cut short
      const size = parseInt(body.subarray(at, eol).toString("latin1"), 16);
      if (size === 0) break;
      parts.push(body.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    body = Buffer.concat(parts);
  }
  return { status, headers, body: new Uint8Array(body) };
}
