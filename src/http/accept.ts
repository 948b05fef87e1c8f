// Chooses the body format of a 200 from the Accept header. JSON is what the specification
// promises, so it is the answer for a missing, wildcard, unknown or malformed header and for
// a tie; CSV only when text/csv ranks above application/json, each weighed by the most
// specific range that matches it (RFC 9110 §12.5.1: text/* counts for text/csv), and that
// range names text (text/csv or text/*): */* alone says nothing of CSV, so a client that
// never mentions text keeps getting JSON. Never 406: an odd Accept still gets JSON.

import { TOKEN, weightedList } from "./weighted-list.ts";

export type RowFormat = "json" | "csv";

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

const MEDIA_RANGE = new RegExp(`^(${TOKEN})/(${TOKEN})$`);

function parseRanges(header: string): MediaRange[] {
  return weightedList(header, true).flatMap(({ element, q }) => {
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
  const csv = qualityOf(ranges, "text", "csv");
  return csv.namesType && csv.q > qualityOf(ranges, "application", "json").q ? "csv" : "json";
}
