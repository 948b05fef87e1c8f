// If-None-Match (RFC 9110 §13.1.2) and If-Match (§13.1.1): which of an answer's current
// ETags (answer-key.ts) a request names.

interface ListedTag {
  tag: string;
  weak: boolean;
}

/** The entity-tags of an If-None-Match or If-Match list (empty elements allowed), or null when it does not parse. */
function listedTags(header: string): ListedTag[] | null {
  const tags: ListedTag[] = [];
  let i = 0;
  for (;;) {
    while (i < header.length && (header[i] === "," || header[i] === " " || header[i] === "\t")) i++;
    if (i === header.length) return tags;
    const weak = header.startsWith("W/", i);
    if (weak) i += 2;
    if (header[i] !== '"') return null;
    const end = header.indexOf('"', i + 1);
    if (end < 0) return null;
    tags.push({ tag: header.slice(i, end + 1), weak });
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
  return tags ? current.find((tag) => tags.some((t) => t.tag === tag)) : undefined;
}

/**
 * Whether If-Match lets the request through: no header, `*` (an answer always exists once the
 * query is valid), or a listed tag equal to one of `current` by strong comparison (a W/ tag
 * never is). A header that does not parse names no representation, so it does not hold: a
 * client that asked for a condition gets 412, never an answer it did not ask for.
 */
export function matchHolds(header: string | null, current: readonly string[]): boolean {
  if (header === null) return true;
  if (header.trim() === "*") return true;
  const tags = listedTags(header);
  return tags !== null && current.some((tag) => tags.some((t) => !t.weak && t.tag === tag));
}
