// The grammar Accept and Accept-Encoding share (RFC 9110 §12.4.2): a comma-separated list
// whose elements may carry a weight, `;q=qvalue`. One reading for both headers, so they
// cannot drift apart in what they forgive: a malformed element is skipped, never fatal.

/** An RFC 9110 token, as a RegExp source: each half of a media type, a content coding. */
export const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";

const WEIGHT = /^\s*q\s*=\s*(.*?)\s*$/i;
// 0 to 1 with up to three decimals; any other weight makes its element malformed.
const QVALUE = /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/;

/**
 * The elements of `header` (each its text before the first ";", trimmed) with their weight,
 * 1 when none is given. With `parameters` an element may carry others besides the weight (a
 * media range's `charset=utf-8`) and the last weight counts; without, it carries at most the
 * weight (a content coding).
 */
export function weightedList(header: string, parameters: boolean): { element: string; q: number }[] {
  const elements: { element: string; q: number }[] = [];
  for (const part of header.split(",")) {
    const [element = "", ...params] = part.split(";");
    if (!parameters && params.length > 1) continue;
    let q = 1;
    for (const param of params) {
      const weight = WEIGHT.exec(param);
      if (weight) q = QVALUE.test(weight[1]!) ? Number(weight[1]) : NaN;
      else if (!parameters) q = NaN;
    }
    if (!Number.isNaN(q)) elements.push({ element: element.trim(), q });
  }
  return elements;
}
