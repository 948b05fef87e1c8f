// ETags and If-None-Match (src/http/entity-tag.ts): one tag per representation and state,
// and RFC 9110 §13.1.2's weak comparison over lists, `*`, W/ and malformed headers.

import { describe, expect, test } from "bun:test";
import { answerState, entityTag, noneMatchHits } from "../../src/http/entity-tag.ts";

const answer = { build: "0.1.0 abc", version: "16400.7.0.1", monthFrom: "2026-10-01", monthTo: "2026-10-31", segment: "normal" };

describe("entity tags", () => {
  test("one state for one build, version and question; another for any difference", () => {
    const state = answerState(answer);
    expect(state).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(answerState({ ...answer })).toBe(state);
    for (const changed of [{ build: "0.1.1 abc" }, { version: "16400.8.0.1" }, { monthFrom: "2026-10-02" }, { monthTo: "2026-10-30" }, { segment: "all" }]) {
      expect(answerState({ ...answer, ...changed })).not.toBe(state);
    }
  });

  test("each format and content coding has its own strong tag", () => {
    const state = answerState(answer);
    const tags = [entityTag(state, "json", null), entityTag(state, "json", "br"), entityTag(state, "json", "gzip"), entityTag(state, "csv", null), entityTag(state, "csv", "gzip")];
    expect(new Set(tags).size).toBe(5);
    expect(tags[1]).toBe(`"${state}-json-br"`);
    expect(tags.every((t) => /^"[\x21\x23-\x7e]+"$/.test(t))).toBe(true);
  });
});

describe("If-None-Match", () => {
  const current = ['"s-json-br"', '"s-json"'];
  test.each([
    ['"s-json-br"', '"s-json-br"'],
    ['"s-json"', '"s-json"'],
    ['W/"s-json"', '"s-json"'], // weak comparison
    ['"other", "s-json-br"', '"s-json-br"'],
    [',, "other" ,W/"s-json" ,', '"s-json"'], // empty list elements are allowed
    ["*", '"s-json-br"'],
    [" * ", '"s-json-br"'],
  ])("%s names %s", (header, hit) => {
    expect(noneMatchHits(header, current)).toBe(hit);
  });

  test.each([
    ['"other"'],
    ['"s-json-gzip"'], // another representation
    ['"s-csv"'],
    ["s-json"], // not quoted: malformed
    ['"s-json'], // unterminated
    ['"s-json" x'],
    ['w/"s-json"'], // W/ is case-sensitive
    [""],
    ['"a,b"'], // a comma inside a tag is part of it
  ])("%s names none", (header) => {
    expect(noneMatchHits(header, current)).toBeUndefined();
  });

  test("no header, no match", () => {
    expect(noneMatchHits(null, current)).toBeUndefined();
  });

  test("a comma inside a tag is part of the tag", () => {
    expect(noneMatchHits('"a,b", "c"', ['"a,b"'])).toBe('"a,b"');
  });
});
