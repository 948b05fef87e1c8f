// The 200 of GET /external/v1/product-costs: the rows as a JSON array (the default, what
// the specification promises) or as CSV when the Accept header prefers it; or the JSON
// answer the refresh rendered for an exact calendar period, as it is. Both carry
// Vary: Accept, since the same URL has two representations. body.ts sends it.

import type { ProductCostRead } from "../reads/product-costs.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import type { ChunkStream } from "./chunk-stream.ts";
import type { Exchange } from "../request/exchange.ts";
import { BASE_HEADERS } from "../request/responses.ts";
import { CSV_EXCEL_TABLE, CSV_TABLE } from "./row-csv.ts";
import { encodedRows, JSON_ARRAY, RENDERED_JSON } from "./row-stream.ts";

export const CSV_TYPE = "text/csv; charset=utf-8";
/** The Excel-safe variant says what it is, as it was asked for. */
export const CSV_EXCEL_TYPE = "text/csv; charset=utf-8; variant=excel";

/** The headers of the 200 of `key` (its format chosen from the Accept header). */
export function answerHeaders(key: AnswerKey): Record<string, string> {
  if (key.format === "json") return { ...BASE_HEADERS, vary: "Accept" };
  // The dates are validated YYYY-MM-DD and the segment one of three words: safe in a file name.
  const type = key.format === "csv-excel" ? CSV_EXCEL_TYPE : CSV_TYPE;
  return { ...BASE_HEADERS, "content-type": type, "content-disposition": `attachment; filename="${key.fileName}"`, vary: "Accept" };
}

/** The body of the 200 for `answer`: the rendered answer as it is, or the rows in `format` (the question's). */
export function rowsSource(answer: ProductCostRead, format: AnswerKey["format"], exchange: Pick<Exchange, "rows">): ChunkStream {
  if (answer.kind === "rendered") return encodedRows(answer.read, exchange, RENDERED_JSON);
  if (format === "csv") return encodedRows(answer.read, exchange, CSV_TABLE);
  if (format === "csv-excel") return encodedRows(answer.read, exchange, CSV_EXCEL_TABLE);
  return encodedRows(answer.read, exchange, JSON_ARRAY);
}
