// Which content coding a client accepts for a 200, from its Accept-Encoding header (RFC 9110
// §12.5.3): br or gzip when either has q > 0 (`*` counts), br on a tie; none otherwise. Part
// of what the request asks, as Accept is (accept.ts): the body's compressor (src/body/
// compression.ts) then decides by the answer's size whether it is used.

import { TOKEN, weightedList } from "./weighted-list.ts";

export type ContentCoding = "br" | "gzip";

const CODING = new RegExp(`^${TOKEN}$`);

/** The coding to answer with for this Accept-Encoding header (RFC 9110 §12.5.3), or null for identity. */
export function chooseEncoding(header: string | null): ContentCoding | null {
  if (!header) return null;
  const q = new Map<string, number>();
  for (const { element, q: value } of weightedList(header, false)) {
    if (!CODING.test(element)) continue;
    let coding = element.toLowerCase();
    if (coding === "x-gzip") coding = "gzip"; // RFC 9110 §8.4.1.3
    // A coding listed twice: the most favourable listing counts.
    q.set(coding, Math.max(q.get(coding) ?? 0, value));
  }
  const star = q.get("*");
  const qualityOf = (coding: ContentCoding) => q.get(coding) ?? star ?? 0;
  const br = qualityOf("br");
  const gzip = qualityOf("gzip");
  if (br <= 0 && gzip <= 0) return null;
  return br >= gzip ? "br" : "gzip";
}
