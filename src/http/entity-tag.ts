// ETags of GET /external/v1/product-costs and If-None-Match (RFC 9110 §8.8.3, §13.1.2).
//
// A strong ETag names one representation of one answer state: a hash of the build (a new
// release may write other bytes), the answer version read from the database (the state of
// the range's data, src/db/answer-version.ts) and what was asked (range, segment), then the
// format and the content coding in clear, so the JSON, the CSV and each compression of them
// have tags of their own, as strong validators must. Two instances of one build on one
// database give the same tags; nothing in a tag tells anything a 200 would not.

import { createHash } from "node:crypto";
import type { ContentCoding } from "./compression.ts";

export interface TaggedAnswer {
  build: string;
  version: string;
  monthFrom: string;
  monthTo: string;
  segment: string;
}

/** The state part of the tags of an answer: the same for all its representations. */
export function answerState(answer: TaggedAnswer): string {
  const { build, version, monthFrom, monthTo, segment } = answer;
  return createHash("sha256").update(`${build}\n${version}\n${monthFrom}\n${monthTo}\n${segment}`).digest("base64url").slice(0, 22);
}

/** The strong ETag of one representation, quotes included. */
export function entityTag(state: string, format: "json" | "csv", coding: ContentCoding | null): string {
  return `"${state}-${format}${coding ? `-${coding}` : ""}"`;
}

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
