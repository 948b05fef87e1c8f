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
