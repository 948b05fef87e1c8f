// Chooses the body format of a 200 from the Accept header. JSON is what the specification
// promises, so it is the answer for a missing, wildcard, unknown or malformed header and for
// a tie; CSV only when text/csv ranks above application/json, each weighed by the most
// specific range that matches it (RFC 9110 §12.5.1: text/* counts for text/csv), and that
// range names text (text/csv or text/*): */* alone says nothing of CSV, so a client that
// never mentions text keeps getting JSON. Never 406: an odd Accept still gets JSON.
//
// The CSV has an Excel-safe variant (row-csv.ts), asked for with the media type parameter
// `variant=excel` on text/csv (docs/api.md says why a parameter): chosen when a text/csv
// range naming it ranks above application/json and weighs at least as much as a plain
// text/csv one (which weighs the plain CSV alone). An Accept that does not name it is read
// exactly as before.

import { TOKEN, weightedList } from "./weighted-list.ts";

export type RowFormat = "json" | "csv" | "csv-excel";

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
  const json = qualityOf(parseRanges(accept), "application", "json").q;
  // Ranges naming the variant weigh the variant only; without one, this is the plain rule.
  const excel = excelRanges(accept);
  const csv = qualityOf(parseRanges(accept, excel.ranges), "text", "csv");
  const plain = csv.namesType ? csv.q : 0;
  if (excel.q > 0 && excel.q >= plain && excel.q > json) return "csv-excel";
  return plain > json ? "csv" : "json";
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
