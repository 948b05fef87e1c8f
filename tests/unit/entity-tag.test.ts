// If-None-Match (src/http/entity-tag.ts): RFC 9110 §13.1.2's weak comparison over lists,
// `*`, W/ and malformed headers. The tags themselves: answer-key.test.ts.

import { describe, expect, test } from "bun:test";
import { noneMatchHits } from "../../src/http/entity-tag.ts";

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
