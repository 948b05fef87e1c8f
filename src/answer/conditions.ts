// The conditions stage of GET /external/v1/product-costs (src/service/pipeline.ts): what the request's
// If-Match and If-None-Match say of the answer's version, decided before any row is read, in
// RFC 9110 §13.2.2's order:
//   If-Match names no current ETag         → 412 Precondition Failed (thrown);
//   If-None-Match names the current ETag  → 304 Not Modified;
//   otherwise the answer is read, under the validators said here.
// Read from the daily rows (no version: src/reads/read-source.ts) nothing can say the bytes are
// those of a tag: no ETag, no X-Data-Changed-At, If-None-Match makes a 304 only as `*` and an
// If-Match that names a tag a 412.

import type { AnswerVersion } from "../reads/product-costs.ts";
import type { AnswerKey, ContentCoding } from "../query/answer-key.ts";
import { PRECONDITION_FAILED } from "../failures.ts";
import { notModified } from "../request/exchange.ts";

/** Kept by clients and proxies of one client, always asked again before use. */
export const CACHE_CONTROL = "private, no-cache";

/** The headers that say which state of the data a 200 or 304 stands for (none for the daily rows). */
export function validatorsOf(at: AnswerVersion | null): Record<string, string> {
  return { "cache-control": CACHE_CONTROL, ...(at?.changedAt ? { "x-data-changed-at": at.changedAt } : {}) };
}

/**
 * The 304 the request's conditions ask for, or undefined when the answer is to be read; throws
 * 412 when If-Match holds for no current representation. `wanted`: the coding the client would
 * get now; its identity form counts too (an answer under 1 KiB goes out uncompressed whatever
 * the client accepts).
 */
export function notModifiedFor(headers: Headers, key: AnswerKey, versioned: AnswerVersion | null, build: string, wanted: ContentCoding | null): Response | undefined {
  const ifMatch = headers.get("if-match");
  const ifNoneMatch = headers.get("if-none-match");
  if (!versioned) {
    if (!matchHolds(ifMatch, [])) throw PRECONDITION_FAILED();
    // `*` asks whether an answer exists, which it does once the query is valid (as from the rollup).
    return ifNoneMatch?.trim() === "*" ? notModified({ "cache-control": CACHE_CONTROL, vary: "Accept, Accept-Encoding" }) : undefined;
  }
  const tag = key.tags(build, versioned.version);
  const current = [tag(wanted), ...(wanted ? [tag(null)] : [])];
  if (!matchHolds(ifMatch, current)) throw PRECONDITION_FAILED();
  const matched = noneMatchHits(ifNoneMatch, current);
  return matched ? notModified({ ...validatorsOf(versioned), etag: matched, vary: "Accept, Accept-Encoding" }) : undefined;
}

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
