// The query parser against Python's own parse_qsl(keep_blank_values=True): 1,561 query
// strings (hand-picked and generated, see tests/fixtures/make-parse-qsl-vectors.py) and the
// pairs Python read from them. And the table of odd inputs the README documents.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { lastValues, parseQueryString } from "../../src/query/product-cost-params.ts";

const vectors = readFileSync(join(import.meta.dir, "../fixtures/parse-qsl-vectors.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((line) => JSON.parse(line) as { query: string; pairs: [string, string][] });

test("the fixture holds every vector (none lost to a bad line)", () => {
  expect(vectors.length).toBe(1561);
});

test("every vector reads as Python's parse_qsl read it", () => {
  const wrong = vectors.filter((v) => JSON.stringify(parseQueryString(v.query)) !== JSON.stringify(v.pairs));
  expect(wrong.slice(0, 5).map((v) => ({ query: v.query, python: v.pairs, ours: parseQueryString(v.query) }))).toEqual([]);
});

describe("the documented reading of odd queries (last value wins)", () => {
  test.each([
    ["??month_from=2024-01-01", { "??month_from": "2024-01-01" }],
    ["?month_from=2024-01-01", { "?month_from": "2024-01-01" }],
    ["&&month_from=2024-01-01&&", { month_from: "2024-01-01" }],
    ["=", { "": "" }],
    ["=x", { "": "x" }],
    ["segment", { segment: "" }],
    ["segment=", { segment: "" }],
    ["segment=a+b", { segment: "a b" }],
    ["segment=%2B", { segment: "+" }],
    ["segment=%zz", { segment: "%zz" }],
    ["segment=%", { segment: "%" }],
    ["segment=%FF%FE", { segment: "\ufffd\ufffd" }],
    ["segment=%E2%82", { segment: "\ufffd" }],
    ["segment=%EF%BB%BFall", { segment: "\ufeffall" }],
    ["segment=all&segment=bogus", { segment: "bogus" }],
    ["segment=bogus&segment=all", { segment: "all" }],
    ["a=1;segment=all", { a: "1;segment=all" }],
    ["month_from=2024-01-01%26segment%3Dall", { month_from: "2024-01-01&segment=all" }],
  ])("%p", (query, expected) => {
    expect(Object.fromEntries(lastValues(query))).toEqual(expected);
  });

  test("no query at all and an empty one read as no parameters", () => {
    expect(lastValues(undefined).size).toBe(0);
    expect(lastValues("").size).toBe(0);
  });
});
