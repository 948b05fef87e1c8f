// The query stage of GET /external/v1/product-costs (src/service/pipeline.ts). Its three
// parameters, as FastAPI + Pydantic 2 declare them:
//   month_from: date, month_to: date, segment: Literal['normal','sample','all'] = 'normal'
// read from the query string as the FastAPI original reads it (below); the route's TypeBox
// schema (below) checks them with the rules here; this is the one place that knows
// Pydantic's words for a failure, the 422 items; then the range check (400).

import { Kind, Type as T, TypeRegistry } from "@sinclair/typebox";
import { parseLaxDate, type LaxDateError, type LaxDateResult } from "./lax-date.ts";
import { INVALID_MONTH_RANGE, VALIDATION_FAILED } from "../failures.ts";

export const SEGMENTS = ["normal", "sample", "all"] as const;
export type Segment = (typeof SEGMENTS)[number];
export const DEFAULT_SEGMENT: Segment = "normal";

/** A checked question: its inclusive range and its segment (what the database is asked). */
export interface ProductCostQuery {
  monthFrom: string; // YYYY-MM-DD
  monthTo: string; // YYYY-MM-DD
  segment: Segment;
}

/** One item of FastAPI's 422 body; the keys are written in Pydantic's order. */
export interface ValidationItem {
  type: string;
  loc: ["query", string];
  msg: string;
  input: unknown;
  ctx?: Record<string, string>;
}

export const isSegment = (value: unknown): value is Segment => (SEGMENTS as readonly unknown[]).includes(value);

const SEGMENT_EXPECTED = "'normal', 'sample' or 'all'";

/** The parameters as the query string gives them (absent: undefined). */
export type RawParams = Partial<Record<"month_from" | "month_to" | "segment", string>>;

/**
 * Each date parsed once, for the route's schema (its check, below) and for the question
 * (questionOf) alike: the last dates parsed, by their text. Bounded: cleared whole when full.
 * (Not a TypeBox Transform that decodes the query into the question: Elysia 1.4.30 runs a
 * query's Decode twice, the second time on the decoded value, and swallows the check error that
 * throws; it cost about 30 µs of CPU a request, and an Elysia that stopped swallowing it would
 * answer every request with an error.)
 */
const parsedDates = new Map<string, LaxDateResult>();
const PARSED_DATES_MAX = 256;

function laxDate(input: string): LaxDateResult {
  let parsed = parsedDates.get(input);
  if (parsed === undefined) {
    if (parsedDates.size >= PARSED_DATES_MAX) parsedDates.clear();
    parsed = parseLaxDate(input);
    parsedDates.set(input, parsed);
  }
  return parsed;
}

/**
 * Pydantic's verdict on the parameters: the question (the dates as YYYY-MM-DD), or the 422
 * items of every parameter it rejects, all at once, in the order of declaration: for the query
 * stage once the route's schema has accepted the parameters, and for the error hook when it
 * has not.
 */
export function questionOf(params: RawParams): { question: ProductCostQuery } | { items: ValidationItem[] } {
  const items: ValidationItem[] = [];
  const missing = (name: string): ValidationItem => ({ type: "missing", loc: ["query", name], msg: "Field required", input: null });
  const date = (name: "month_from" | "month_to"): string => {
    const input = params[name];
    if (input === undefined) return void items.push(missing(name)), "";
    const parsed = laxDate(input);
    if (parsed.ok) return parsed.date;
    const failure: LaxDateError = parsed;
    items.push({ type: failure.type, loc: ["query", name], msg: failure.msg, input, ...("ctx" in failure ? { ctx: failure.ctx } : {}) });
    return "";
  };
  const monthFrom = date("month_from");
  const monthTo = date("month_to");
  const segment = params.segment ?? DEFAULT_SEGMENT;
  if (!isSegment(segment)) items.push({ type: "literal_error", loc: ["query", "segment"], msg: `Input should be ${SEGMENT_EXPECTED}`, input: segment, ctx: { expected: SEGMENT_EXPECTED } });
  return items.length ? { items } : { question: { monthFrom, monthTo, segment: segment as Segment } };
}

/**
 * The question of parameters the route's schema accepted, its range checked: 400 when it ends
 * before it starts or spans more than `maxRangeDays` (0: no limit).
 */
export function checkedQuestion(params: RawParams, maxRangeDays: number): ProductCostQuery {
  const verdict = questionOf(params);
  if ("items" in verdict) throw VALIDATION_FAILED(verdict.items); // (the schema accepts none of these)
  const { question } = verdict;
  if (question.monthFrom > question.monthTo) throw INVALID_MONTH_RANGE();
  if (maxRangeDays > 0 && rangeDays(question.monthFrom, question.monthTo) > maxRangeDays) throw INVALID_MONTH_RANGE();
  return question;
}

/** Days in the inclusive range [from, to] of two YYYY-MM-DD dates (1 for a one-day range). */
export function rangeDays(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
}

// The one query-string parser of the service: validation, the 422 `input` values and the
// handler all read the query through it. It reads a query as the FastAPI original does,
// Starlette's QueryParams over Python's urllib.parse.parse_qsl(query, keep_blank_values=True):
//   - pairs are separated by "&" only (";" is an ordinary character); empty pairs are skipped;
//   - a pair splits at its first "="; a key without "=" has the value "" (so does "a=");
//     a bare "=" is the key "" with the value "";
//   - "+" is a space, then percent-escapes are decoded: a run of %XX bytes is read as UTF-8,
//     each invalid sequence becoming U+FFFD (a BOM is kept); "%zz", "%4" and a lone "%" stay
//     as they are;
//   - nothing else is special: a leading "?" (from a target like /p??a=1) belongs to the
//     first key, which is then "?a". (URLSearchParams' string constructor would drop it.)
// The last value of a repeated key wins (QueryParams.get). Tested against parse_qsl itself:
// tests/fixtures/parse-qsl-vectors.jsonl.

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 65 && code <= 70) return code - 55; // A-F
  if (code >= 97 && code <= 102) return code - 87; // a-f
  return -1;
}

/** Python's urllib.parse.unquote_plus(text, encoding="utf-8", errors="replace"). */
export function unquotePlus(text: string): string {
  const plain = text.replaceAll("+", " ");
  if (!plain.includes("%")) return plain;
  let out = "";
  let bytes: number[] = [];
  const flush = () => {
    if (bytes.length) out += UTF8.decode(new Uint8Array(bytes));
    bytes = [];
  };
  for (let i = 0; i < plain.length; i++) {
    const code = plain.charCodeAt(i);
    if (code === 37 /* % */ && i + 2 < plain.length) {
      const hi = hexValue(plain.charCodeAt(i + 1));
      const lo = hexValue(plain.charCodeAt(i + 2));
      if (hi !== -1 && lo !== -1) {
        bytes.push(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    if (code < 0x80) {
      // An ASCII character joins the byte run: Python decodes each ASCII stretch as a whole.
      bytes.push(code);
    } else {
      // Python leaves characters outside ASCII as they are, between the decoded stretches.
      flush();
      out += plain[i];
    }
  }
  flush();
  return out;
}

/** parse_qsl(query, keep_blank_values=True): every pair, in order. */
export function parseQueryString(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const field of query.split("&")) {
    if (field === "") continue;
    const eq = field.indexOf("=");
    const name = eq === -1 ? field : field.slice(0, eq);
    const value = eq === -1 ? "" : field.slice(eq + 1);
    pairs.push([unquotePlus(name), unquotePlus(value)]);
  }
  return pairs;
}

/** The last value of each key, as Starlette's QueryParams.get() returns it. */
export function lastValues(query: string | undefined): Map<string, string> {
  const values = new Map<string, string>();
  if (query) for (const [key, value] of parseQueryString(query)) values.set(key, value);
  return values;
}

// The endpoint's TypeBox schemas: its query, which Elysia validates and @elysiajs/openapi
// documents, and its bodies, for the document.

// Pydantic's lax date and the segment are checked as kinds of their own, so that TypeBox checks
// no `format` (@elysiajs/openapi registers its own strict `date` format when it loads, Elysia
// another that rolls 2024-02-30 over to March) while the document still says `format: date` as
// FastAPI's does, and `enum` with its default for the segment (a union of literals would be
// documented without them).
TypeRegistry.Set("LaxDate", (_, value) => typeof value === "string" && laxDate(value).ok);
TypeRegistry.Set("Segment", (_, value) => isSegment(value));

const laxDateParam = (description: string, example: string) =>
  // In T.String's key order, so that the document is as before.
  T.Unsafe<string>({ [Kind]: "LaxDate", format: "date", description, example, type: "string" });

/** The query as the route declares it (and the document shows it); its failures become Pydantic's items in error-handler.ts. */
export const ProductCostsQuery = T.Object({
  // `example`, not `examples`: the document is OpenAPI 3.0.
  month_from: laxDateParam("Inclusive start date, YYYY-MM-DD (a full date despite the name).", "2026-10-01"),
  month_to: laxDateParam("Inclusive end date, YYYY-MM-DD. Must not be before month_from.", "2026-10-31"),
  segment: T.Optional(
    T.Unsafe<Segment>({
      [Kind]: "Segment",
      type: "string",
      enum: [...SEGMENTS],
      default: DEFAULT_SEGMENT,
      description: "normal = normal products; sample = sample products; all = both.",
    }),
  ),
});

// What a generated client should know of every amount: it is a decimal, written exactly.
const EXACT =
  " An exact decimal (the sum of numeric(20,6) values: at most 6 decimals, more digits than a float64 holds exactly): " +
  "parse it as a decimal, not a float (Python: json.loads(text, parse_float=decimal.Decimal); JavaScript: JSON.parse " +
  "with a reviver that reads context.source; or ask for Accept: application/vnd.apache.arrow.stream, decimal128(38, 6)).";
const amount = (what: string) =>
  T.Number({ nullable: true, format: "decimal", description: `${what} in USD, summed over the range. null = not costed; 0 = a costed zero.${EXACT}` });

export const ProductCostRow = T.Object(
  {
    erp_product_id: T.Integer({
      nullable: true,
      format: "int64",
      description: "Product id in the ERP (a bigint: past 2^53 a JavaScript number loses its last digits). null for unmapped products.",
    }),
    erp_sku: T.String({ nullable: true, description: "SKU in the ERP. null for unmapped products." }),
    product_name: T.String({ nullable: true, description: "Product name." }),
    purchase_cost_usd: amount("Purchase cost"),
    inbound_freight_usd: amount("Inbound (first-leg) freight"),
    shipping_to_customer_usd: amount("Shipping to customer (last leg)"),
    warehouse_fees_usd: amount("Warehouse fees"),
  },
  { additionalProperties: false },
);

/** `{"detail":"<CODE>"}`, the body of every error but 422; `codes` are the values this status can carry. */
export const DetailCode = (...codes: [string, ...string[]]) =>
  T.Object({ detail: T.String({ enum: codes }) }, { additionalProperties: false });

/** One Pydantic error item; the keys are always written in this order. */
export const ValidationErrorItem = T.Object({
  type: T.String({ description: "Error type, e.g. missing, date_from_datetime_parsing, enum." }),
  loc: T.Array(T.Union([T.String(), T.Integer()]), { description: 'Location of the invalid input, e.g. ["query","month_from"].' }),
  msg: T.String({ description: "Message." }),
  input: T.Any({ description: "The offending input (null when the parameter is missing)." }),
  ctx: T.Optional(T.Object({}, { additionalProperties: true, description: "Additional context." })),
});

export const ValidationErrorBody = T.Object({ detail: T.Array(ValidationErrorItem) }, { additionalProperties: false });
