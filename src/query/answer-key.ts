// The plan stage of GET /external/v1/product-costs (src/service/pipeline.ts): the one key of the
// request's answer, made from the checked question and the representation the request asks
// for (its format from Accept, its content coding from Accept-Encoding).

import { createHash } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import type { ProductCostQuery, ProductCostsQuery } from "./product-cost-params.ts";

// The one key of an answer of GET /external/v1/product-costs: made once per request from the
// validated query and the representation the request chose, and the only source of what
// names that answer elsewhere: the version read's key (the range: what the version counts),
// the answer cache's key and its coalescing (the question and the format), the ETag (that,
// the build, the version and the coding) and the CSV file name.
//
// Every parameter of the route's schema is in it. QUERY_FIELDS names each parameter of
// ProductCostsQuery and the field it becomes: a parameter added to the schema but not there is
// a type error, and tests/unit/answer-key.test.ts checks that a change of any one of them
// changes every key.
//
// ETags (RFC 9110 §8.8.3): a strong tag names one representation of one answer state, a hash
// of the build (a new release may write other bytes), the answer version read from the
// database (src/reads/answer-version.ts) and the question, then the format and the content coding
// in clear, so the JSON, the CSV and each compression of them have tags of their own, as
// strong validators must. Two instances of one build on one database give the same tags;
// nothing in a tag tells anything a 200 would not.

/** Each parameter of the route's schema and the field of the validated query it becomes, in the schema's order. */
export const QUERY_FIELDS = { month_from: "monthFrom", month_to: "monthTo", segment: "segment" } as const satisfies Record<
  keyof Static<typeof ProductCostsQuery>,
  keyof ProductCostQuery
>;
// And the other way round: a field of the validated query that no parameter gives is a type error here.
type Unkeyed = Exclude<keyof ProductCostQuery, (typeof QUERY_FIELDS)[keyof typeof QUERY_FIELDS]>;
const everyFieldKeyed: [Unkeyed] extends [never] ? true : Unkeyed = true;
void everyFieldKeyed;

export interface AnswerKey {
  readonly query: ProductCostQuery;
  readonly format: RowFormat;
  /** The range alone: what the answer's version depends on. */
  readonly range: { firstDay: string; lastDay: string; id: string };
  /** The answer in this format, any coding: the answer cache's key. */
  readonly cached: string;
  /** The name of the CSV or Arrow download (.arrows: the stream format's registered extension). */
  readonly fileName: string;
  /** The strong ETags of this answer in the state `version` of the data, one per coding. */
  tags(build: string, version: string): (coding: ContentCoding | null) => string;
}

export function answerKey(query: ProductCostQuery, format: RowFormat): AnswerKey {
  // Validated dates (YYYY-MM-DD) and a segment word: no separator inside any of them.
  const question = Object.values(QUERY_FIELDS).map((field) => query[field]);
  return {
    query,
    format,
    range: { firstDay: query.monthFrom, lastDay: query.monthTo, id: `${query.monthFrom} ${query.monthTo}` },
    cached: `${format} ${question.join(" ")}`,
    fileName: `product-costs_${question.join("_")}${format === "csv-excel" ? "_excel" : ""}${format === "arrow" ? ".arrows" : ".csv"}`,
    tags(build, version) {
      const state = createHash("sha256").update([build, version, ...question].join("\n")).digest("base64url").slice(0, 22);
      return (coding) => `"${state}-${format}${coding ? `-${coding}` : ""}"`;
    },
  };
}

// What the request asks of its 200's representation (the plan stage of src/service/pipeline.ts):
// the body's format from Accept, the content coding from Accept-Encoding, both read from the
// same `;q=` lists.

// The `;q=` lists of Accept and Accept-Encoding (RFC 9110 §12.4.2), read one way for both so
// that they cannot drift apart in what they forgive: a malformed element is skipped, never fatal.

/** An RFC 9110 token, as a RegExp source: each half of a media type, a content coding. */
export const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
const WEIGHT = /^\s*q\s*=\s*(.*?)\s*$/i;
const QVALUE = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/; // 0 to 1, three decimals at most

/**
 * Each element (its text before the first ";", trimmed) with its weight, 1 when it has none.
 * With `parameters` it may carry others (a media range's charset) and its last weight counts;
 * without, it carries at most the weight (a content coding).
 */
export function weightedList(header: string, parameters: boolean): { element: string; q: number }[] {
  return header.split(",").flatMap((part) => {
    const [element = "", ...params] = part.split(";");
    if (!parameters && params.length > 1) return [];
    let q = 1;
    for (const param of params) {
      const weight = WEIGHT.exec(param);
      if (weight) q = QVALUE.test(weight[1]!) ? Number(weight[1]) : NaN;
      else if (!parameters) q = NaN;
    }
    return Number.isNaN(q) ? [] : [{ element: element.trim(), q }];
  });
}

// Chooses the body format of a 200 from the Accept header. JSON is what the specification
// promises, so it is the answer for a missing, wildcard, unknown or malformed header and for
// a tie; CSV only when text/csv ranks above application/json, each weighed by the most
// specific range that matches it (RFC 9110 §12.5.1: text/* counts for text/csv), and that
// range names text (text/csv or text/*): */* alone says nothing of CSV, so a client that
// never mentions text keeps getting JSON. Never 406: an odd Accept still gets JSON.
//
// The CSV has an Excel-safe variant (src/body/encode.ts), asked for with the media type parameter
// `variant=excel` on text/csv (docs/api.md says why a parameter): chosen when a text/csv
// range naming it ranks above application/json and weighs at least as much as a plain
// text/csv one (which weighs the plain CSV alone). An Accept that does not name it is read
// exactly as before.
//
// An Arrow IPC stream (src/body/arrow.ts) is chosen when application/vnd.apache.arrow.stream,
// named exactly (application/* says nothing of it), ranks above JSON and above CSV; a tie with
// either keeps that one. Arrow's file format, Parquet, NDJSON or XML get JSON, as any other type.
export type RowFormat = "json" | "csv" | "csv-excel" | "arrow";

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

const MEDIA_RANGE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);

/** The media ranges of `header`, less the elements at the indexes in `without`. */
function parseRanges(header: string, without: ReadonlySet<number> = new Set()): MediaRange[] {
  const kept = without.size ? header.split(",").filter((_, i) => !without.has(i)).join(",") : header;
  return weightedList(kept, true).flatMap(({ element, q }) => {
    const m = MEDIA_RANGE.exec(element);
    return m ? [{ type: m[1]!.toLowerCase(), subtype: m[2]!.toLowerCase(), q }] : [];
  });
}

/**
 * The q of the most specific range matching type/subtype (RFC 9110 §12.5.1), 0 if none
 * matches, and whether that range names the type (type/subtype or type/*, not the full wildcard).
 */
function qualityOf(ranges: readonly MediaRange[], type: string, subtype: string): { q: number; namesType: boolean } {
  let best = -1;
  let q = 0;
  for (const r of ranges) {
    const specificity =
      r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === "*" ? 1 : r.type === "*" && r.subtype === "*" ? 0 : -1;
    if (specificity > best) {
      best = specificity;
      q = r.q;
    }
  }
  return { q, namesType: best > 0 };
}

export function preferredRowFormat(accept: string | null): RowFormat {
  if (!accept) return "json";
  const ranges = parseRanges(accept);
  const json = qualityOf(ranges, "application", "json").q;
  const text = csvFormat(accept, json);
  // Arrow only where it is named exactly: */* and application/* say nothing of it.
  const arrow = Math.max(0, ...ranges.filter((r) => r.type === "application" && r.subtype === ARROW_SUBTYPE).map((r) => r.q));
  return arrow > json && arrow > text.q ? "arrow" : text.format;
}

const ARROW_SUBTYPE = "vnd.apache.arrow.stream";

/** JSON or a CSV, as chosen before Arrow was served (CSV when it ranks above JSON's q, `json`), and the q of a CSV chosen (0 for JSON). */
function csvFormat(accept: string, json: number): { format: RowFormat; q: number } {
  // Ranges naming the variant weigh the variant only; without one, this is the plain rule.
  const excel = excelRanges(accept);
  const csv = qualityOf(parseRanges(accept, excel.ranges), "text", "csv");
  const plain = csv.namesType ? csv.q : 0;
  if (excel.q > 0 && excel.q >= plain && excel.q > json) return { format: "csv-excel", q: excel.q };
  return plain > json ? { format: "csv", q: plain } : { format: "json", q: 0 };
}

// `variant=excel`, the value a token or a quoted string, in any case.
const EXCEL_VARIANT = /^\s*variant\s*=\s*(?:excel|"excel")\s*$/i;

/** The elements of `accept` that are text/csv with variant=excel (their index), and the highest q among them. */
function excelRanges(accept: string): { ranges: Set<number>; q: number } {
  const ranges = new Set<number>();
  let q = 0;
  accept.split(",").forEach((part, i) => {
    const [type = "", ...params] = part.split(";");
    if (type.trim().toLowerCase() !== "text/csv" || !params.some((p) => EXCEL_VARIANT.test(p))) return;
    const weight = weightedList(part, true)[0]?.q;
    if (weight === undefined) return;
    ranges.add(i);
    q = Math.max(q, weight);
  });
  return { ranges, q };
}

// Which content coding a client accepts for a 200, from its Accept-Encoding header (RFC 9110
// §12.5.3): br or gzip when either has q > 0 (`*` counts), br on a tie; none otherwise. Part
// of what the request asks, as Accept is (above): the body's compressor (src/body/
// compression.ts) then decides by the answer's size whether it is used.
export type ContentCoding = "br" | "gzip";

const CODING = new RegExp(`^${TOKEN}$`);

/** The coding to answer with for this Accept-Encoding header (RFC 9110 §12.5.3), or null for identity. */
export function chooseEncoding(header: string | null): ContentCoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const { element, q: value } of weightedList(header, false)) {
    if (!CODING.test(element)) continue;
    let coding = element.toLowerCase();
    if (coding === "x-gzip") coding = "gzip"; // RFC 9110 §8.4.1.3
    // A coding listed twice: the most favourable listing counts.
    q.set(coding, Math.max(q.get(coding) ?? 0, value));
  }
  const star = q.get("*");
  const qualityOf = (coding: ContentCoding) => q.get(coding) ?? star ?? 0;
  const br = qualityOf("br");
  const gzip = qualityOf("gzip");
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? "br" : "gzip";
}
