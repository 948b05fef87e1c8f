// If-None-Match (src/answer/entity-tag.ts): RFC 9110 §13.1.2's weak comparison over lists,
// `*`, W/ and malformed headers; If-Match: §13.1.1's strong comparison. The tags themselves: answer-key.test.ts.

import { describe, expect, test } from "bun:test";
import { matchHolds, noneMatchHits } from "../../src/answer/conditions.ts";

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

describe("If-Match", () => {
  const current = ['"s-json-br"', '"s-json"'];
  test.each([[null], ['"s-json"'], ['"s-json-br"'], ['"other", "s-json"'], [',, "s-json" ,'], ["*"], [" * "]])("%p holds", (header) => {
    expect(matchHolds(header, current)).toBe(true);
  });

  test.each([
    ['"other"'],
    ['W/"s-json"'], // strong comparison: a weak tag never matches
    ['"other", W/"s-json-br"'],
    ['"s-json-gzip"'],
    ['"s-csv"'],
    ["s-json"], // malformed: names nothing, so it cannot hold
    ['"s-json'],
    ['"s-json" x'],
    [""],
  ])("%s does not hold", (header) => {
    expect(matchHolds(header, current)).toBe(false);
  });
});
