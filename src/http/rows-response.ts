// The 200 of GET /external/v1/product-costs: the rows as a JSON array (the default, what
// the specification promises) or as CSV when the Accept header prefers it; or the JSON
// answer the refresh rendered for an exact calendar period, as it is. Both carry
// Vary: Accept, since the same URL has two representations. body.ts sends it.

import type { ProductCostQuery, ProductCostRead, RowBatches } from "../db/product-costs.ts";
import type { BodySource } from "./body.ts";
import type { RequestContext } from "./request-context.ts";
import { BASE_HEADERS } from "./responses.ts";
import { CSV_TABLE } from "./row-csv.ts";
import { encodedRows, JSON_ARRAY, RENDERED_JSON, type RowEncoding } from "./row-stream.ts";

export const CSV_TYPE = "text/csv; charset=utf-8";

/** The headers and body source of the 200 for `read`, in the format already chosen from the Accept header (context.format). */
export function rowsAnswer(read: ProductCostRead, context: RequestContext, query: ProductCostQuery): { headers: Record<string, string>; source: BodySource } {
  const json = { ...BASE_HEADERS, vary: "Accept" };
  if (read.kind === "rendered") return { headers: json, source: rowSource(read.batches, context, RENDERED_JSON) };
  if (context.format === "csv") {
    // The dates are validated YYYY-MM-DD and the segment one of three words: safe in a file name.
    const filename = `product-costs_${query.monthFrom}_${query.monthTo}_${query.segment}.csv`;
    return {
      headers: { ...BASE_HEADERS, "content-type": CSV_TYPE, "content-disposition": `attachment; filename="${filename}"`, vary: "Accept" },
      source: rowSource(read.batches, context, CSV_TABLE),
    };
  }
  return { headers: json, source: rowSource(read.batches, context, JSON_ARRAY) };
}

function rowSource<T>(batches: RowBatches<T>, context: RequestContext, encoding: RowEncoding<T>): BodySource {
  return { chunks: encodedRows(batches, context, encoding), close: (reason) => batches.close(reason) };
}
