// Which raw paths hold a dot segment, and which resolved paths left the pattern Bun's router
// matched (src/edge/raw-routes.ts); the wire behaviour is tests/http/dot-segments.test.ts.
import { expect, test } from "bun:test";
import { hasDotSegment, leftItsRawRoute, rawRoutePatterns } from "../../src/edge/routes.ts";

test.each([
  ["/a/../b", true],
  ["/a/./b", true],
  ["/a/%2e%2e/b", true],
  ["/a/%2E%2e/b", true],
  ["/a/.%2E/b", true],
  ["/a/%2e./b", true],
  ["/a/%2e/b", true],
  ["/a\\..\\b", true],
  ["/a/..", true],
  ["/a/...", false],
  ["/a/..b", false],
  ["/a/.hidden", false],
  ["/a/%2e%2e%2e", false],
  ["/a/%252e%252e/b", false],
  ["/external/v1/product-costs", false],
])("hasDotSegment(%p) is %p", (path, expected) => {
  expect(hasDotSegment(path)).toBe(expected);
});

const PATTERNS = rawRoutePatterns(["/healthz", "/metrics", "/external/v1/product-costs", "/healthz"]);

test("the patterns: each served path with and without its slash, the endpoint and its subtree, once each", () => {
  expect(PATTERNS).toEqual(["/healthz", "/healthz/", "/metrics", "/metrics/", "/external/v1/product-costs", "/external/v1/product-costs/*"]);
});

test.each([
  [null, "/metrics", true],
  [null, "/metrics/", true],
  [null, "/external/v1/product-costs", true],
  [null, "/external/v1/product-costs/", true],
  [null, "/nothing", false],
  ["/metrics", "/metrics", false],
  ["/external/v1/product-costs/*", "/metrics", true],
  ["/external/v1/product-costs/*", "/external/v1/product-costs/", false],
])("raw pattern %p resolved to %p: left it %p", (pattern, path, expected) => {
  expect(leftItsRawRoute({ pattern }, path, PATTERNS)).toBe(expected);
});
