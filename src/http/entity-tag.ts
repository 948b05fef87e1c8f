// If-None-Match (RFC 9110 §13.1.2): which of an answer's current ETags (answer-key.ts) a
// request names.

/** The entity-tags of an If-None-Match list (empty elements allowed), or null when it does not parse. */
function listedTags(header: string): string[] | null {
  const tags: string[] = [];
  let i = 0;
  for (;;) {
    while (i < header.length && (header[i] === "," || header[i] === " " || header[i] === "\t")) i++;
    if (i === header.length) return tags;
    if (header.startsWith("W/", i)) i += 2; // weak comparison: the tag alone counts
    if (header[i] !== '"') return null;
    const end = header.indexOf('"', i + 1);
    if (end < 0) return null;
    tags.push(header.slice(i, end + 1));
    i = end + 1;
    while (i < header.length && (header[i] === " " || header[i] === "\t")) i++;
    if (i < header.length && header[i] !== ",") return null;
  }
}

/**
 * The tag of `current` (the representations the request could get now) that If-None-Match
 * names, by weak comparison (W/ ignored); `*` names any. Undefined when it names none, and
 * when the header does not parse: the request is then answered in full, never with a wrong 304.
 */
export function noneMatchHits(header: string | null, current: readonly string[]): string | undefined {
  if (header === null) return undefined;
  if (header.trim() === "*") return current[0];
  const tags = listedTags(header);
  return tags ? current.find((tag) => tags.includes(tag)) : undefined;
}
