// Validation of the three query parameters of GET /external/v1/product-costs, with the
// exact error items FastAPI + Pydantic 2 produce for
//   month_from: date, month_to: date, segment: Literal['normal','sample','all'] = 'normal'.
// Items are reported all at once, in declaration order, keys in Pydantic's order:
// type, loc, msg, input[, ctx].

import { parseLaxDate } from "./lax-date.ts";
import { lastValues } from "./query-string.ts";

export const SEGMENTS = ["normal", "sample", "all"] as const;
export type Segment = (typeof SEGMENTS)[number];

export interface ProductCostParams {
  monthFrom: string; // YYYY-MM-DD
  monthTo: string; // YYYY-MM-DD
  segment: Segment;
}

export interface ValidationItem {
  type: string;
  loc: ["query", string];
  msg: string;
  input: unknown;
  ctx?: Record<string, string>;
}

export type ParamsResult = { ok: true; params: ProductCostParams } | { ok: false; errors: ValidationItem[] };

const SEGMENT_EXPECTED = "'normal', 'sample' or 'all'";

function missing(name: string): ValidationItem {
  return { type: "missing", loc: ["query", name], msg: "Field required", input: null };
}

function checkDate(name: string, raw: string | undefined, errors: ValidationItem[]): string | undefined {
  if (raw === undefined) {
    errors.push(missing(name));
    return undefined;
  }
  const result = parseLaxDate(raw);
  if (result.ok) return result.date;
  const item: ValidationItem = { type: result.type, loc: ["query", name], msg: result.msg, input: raw };
  if ("ctx" in result) item.ctx = result.ctx;
  errors.push(item);
  return undefined;
}

function checkSegment(raw: string | undefined, errors: ValidationItem[]): Segment | undefined {
  if (raw === undefined) return "normal";
  if ((SEGMENTS as readonly string[]).includes(raw)) return raw as Segment;
  errors.push({
    type: "literal_error",
    loc: ["query", "segment"],
    msg: `Input should be ${SEGMENT_EXPECTED}`,
    input: raw,
    ctx: { expected: SEGMENT_EXPECTED },
  });
  return undefined;
}

/** Validates the raw query string (what follows "?", undefined when there is none). */
export function validateProductCostParams(queryString: string | undefined): ParamsResult {
  const query = lastValues(queryString);
  const errors: ValidationItem[] = [];
  const monthFrom = checkDate("month_from", query.get("month_from"), errors);
  const monthTo = checkDate("month_to", query.get("month_to"), errors);
  const segment = checkSegment(query.get("segment"), errors);
  if (errors.length) return { ok: false, errors };
  return { ok: true, params: { monthFrom: monthFrom!, monthTo: monthTo!, segment: segment! } };
}

/** Days in the inclusive range [from, to] of two YYYY-MM-DD dates (1 for a one-day range). */
export function rangeDays(from: string, to: string): number {
  return (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / 86_400_000 + 1;
}
