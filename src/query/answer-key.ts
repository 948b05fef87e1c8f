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

import { createHash } from "node:crypto";
import type { Static } from "@sinclair/typebox";
import type { ProductCostQuery } from "./product-cost-params.ts";
import type { RowFormat } from "./accept.ts";
import type { ContentCoding } from "./accept-encoding.ts";
import type { ProductCostsQuery } from "./schemas.ts";

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
  /** The name of the CSV download. */
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
    fileName: `product-costs_${question.join("_")}${format === "csv-excel" ? "_excel" : ""}.csv`,
    tags(build, version) {
      const state = createHash("sha256").update([build, version, ...question].join("\n")).digest("base64url").slice(0, 22);
      return (coding) => `"${state}-${format}${coding ? `-${coding}` : ""}"`;
    },
  };
}
