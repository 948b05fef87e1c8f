import { describe, expect, test } from "bun:test";
import { preferredRowFormat } from "../../src/http/accept.ts";

describe("the Accept header picks CSV only when text/csv is explicitly preferred", () => {
  test.each([
    [null, "json"],
    ["", "json"],
    ["*/*", "json"],
    ["application/json", "json"],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "json"],
    ["text/*", "json"],
    ["text/plain", "json"],
    ["garbage", "json"],
    ["text/csv", "csv"],
    ["TEXT/CSV; charset=utf-8", "csv"],
    ["text/csv, */*;q=0.1", "csv"],
    ["text/csv;q=0.9, application/json;q=0.5", "csv"],
    ["application/json;q=0.5, text/csv", "csv"],
    ["text/csv, application/json", "json"],
    ["application/json, text/csv", "json"],
    ["text/csv, */*", "json"],
    ["text/csv;q=0.5, application/*;q=0.5", "json"],
    ["text/csv;q=0.5, */*", "json"],
    ["text/csv;q=0", "json"],
    ["text/csv;q=0.8, application/json;q=0", "csv"],
    ["text/csv;q=2", "json"],
    ["text/csv;q=abc", "json"],
    ["application/json;q=0.1, text/csv;q=0.2, */*;q=0.3", "csv"],
  ] as const)("Accept %p → %s", (accept, format) => {
    expect(preferredRowFormat(accept)).toBe(format);
  });
});
