// The 200 of GET /external/v1/product-costs: the rows streamed as a JSON array (the
// default, what the specification promises) or as CSV when the Accept header prefers it;
// or the JSON answer the refresh rendered for an exact calendar period, streamed as it is.
// Both carry Vary: Accept, since the same URL has two representations.

import type { ProductCostQuery, ProductCostRead } from "../db/product-costs.ts";
import type { RequestContext } from "./request-context.ts";
import { BASE_HEADERS } from "./responses.ts";
import { CSV_TABLE } from "./row-csv.ts";
import { JSON_ARRAY, RENDERED_JSON, rowStream } from "./row-stream.ts";

export const CSV_TYPE = "text/csv; charset=utf-8";

/** The 200 for `read`, in the format already chosen from the Accept header (context.format). */
export function rowsResponse(read: ProductCostRead, context: RequestContext, query: ProductCostQuery): Response {
  if (read.kind === "rendered") {
    return new Response(rowStream(read.batches, context, RENDERED_JSON), { status: 200, headers: { ...BASE_HEADERS, vary: "Accept" } });
  }
  if (context.format === "csv") {
    // The dates are validated YYYY-MM-DD and the segment one of three words: safe in a file name.
    const filename = `product-costs_${query.monthFrom}_${query.monthTo}_${query.segment}.csv`;
    return new Response(rowStream(read.batches, context, CSV_TABLE), {
      status: 200,
      headers: { ...BASE_HEADERS, "content-type": CSV_TYPE, "content-disposition": `attachment; filename="${filename}"`, vary: "Accept" },
    });
  }
  return new Response(rowStream(read.batches, context, JSON_ARRAY), { status: 200, headers: { ...BASE_HEADERS, vary: "Accept" } });
}
