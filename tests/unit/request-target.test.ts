// The request target as the service reads it from the URL Bun builds: absolute with a Host
// Bun could parse, the bare target without one, the authority for CONNECT.
import { expect, test } from "bun:test";
import { internalUrl, requestTarget } from "../../src/request/exchange.ts";

test.each([
  ["http://127.0.0.1:8080/external/v1/product-costs?a=1", { path: "/external/v1/product-costs", query: "a=1" }],
  ["http://a:99999/healthz?a=1", { path: "/healthz", query: "a=1" }],
  ["http://[::1/healthz", { path: "/healthz", query: undefined }],
  ["/healthz", { path: "/healthz", query: undefined }],
  ["/", { path: "/", query: undefined }],
  ["//evil.com/x", { path: "//evil.com/x", query: undefined }],
  ["http://h/p??a=1", { path: "/p", query: "?a=1" }],
  ["http://h/p?a=1#frag?b", { path: "/p", query: "a=1" }],
  ["http://h/p#?a=1", { path: "/p", query: undefined }],
  ["/p?a=1#b", { path: "/p", query: "a=1" }],
  ["http://h/p?", { path: "/p", query: "" }],
  ["http://h", { path: "/", query: undefined }],
  ["http://h?a=1", { path: "/", query: "a=1" }],
])("%p reads as %p", (url, expected) => {
  expect(requestTarget(url)).toEqual(expected);
});

test.each(["host:443", "*", "", "evil.com/x"])("%p has no path: null", (url) => {
  expect(requestTarget(url)).toBeNull();
});

test("the internal URL has the fixed origin and is normalised: dot segments, bytes outside ASCII", () => {
  expect(internalUrl({ path: "/a/../external/v1/product-costs", query: "segment=\ufffd\u00d9" })).toBe(
    "http://localhost/external/v1/product-costs?segment=%EF%BF%BD%C3%99",
  );
  expect(internalUrl({ path: "//evil.com/x", query: undefined })).toBe("http://localhost//evil.com/x");
});
