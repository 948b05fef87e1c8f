// The three query parameters of GET /external/v1/product-costs, as FastAPI + Pydantic 2 declare
//   month_from: date, month_to: date, segment: Literal['normal','sample','all'] = 'normal'
// The route's TypeBox schema (query/schemas.ts) checks them with the rules below; this is the
// one place that knows Pydantic's words for a failure, the 422 items.

import { parseLaxDate, type LaxDateError } from "./lax-date.ts";

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

/** Does Pydantic's lax `date` accept it? */
export const isLaxDate = (value: string): boolean => parseLaxDate(value).ok;

export const isSegment = (value: unknown): value is Segment => (SEGMENTS as readonly unknown[]).includes(value);

const SEGMENT_EXPECTED = "'normal', 'sample' or 'all'";

function item(name: string, input: string | undefined): ValidationItem {
  const loc: ValidationItem["loc"] = ["query", name];
  if (input === undefined) return { type: "missing", loc, msg: "Field required", input: null };
  if (name === "segment") return { type: "literal_error", loc, msg: `Input should be ${SEGMENT_EXPECTED}`, input, ctx: { expected: SEGMENT_EXPECTED } };
  const failure = parseLaxDate(input) as LaxDateError;
  return { type: failure.type, loc, msg: failure.msg, input, ...("ctx" in failure ? { ctx: failure.ctx } : {}) };
}

/**
 * The 422 items for what the route's TypeBox schema rejected (each error a JSON pointer to a
 * parameter and the value found there, undefined when absent): all at once, in the order
 * of declaration.
 */
export function validationItems(errors: readonly { path: string; value: unknown }[]): ValidationItem[] {
  const rejected = new Map(errors.map((e) => [e.path.slice(1), e.value as string | undefined]));
  return ["month_from", "month_to", "segment"].filter((name) => rejected.has(name)).map((name) => item(name, rejected.get(name)));
}

/** The values of a query the route's schema accepted: the dates as YYYY-MM-DD. */
export function productCostParams(query: { month_from: string; month_to: string; segment?: Segment }): ProductCostQuery {
  const isoDate = (value: string) => (parseLaxDate(value) as { date: string }).date;
  return { monthFrom: isoDate(query.month_from), monthTo: isoDate(query.month_to), segment: query.segment ?? DEFAULT_SEGMENT };
}

/** Days in the inclusive range [from, to] of two YYYY-MM-DD dates (1 for a one-day range). */
export function rangeDays(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
}
