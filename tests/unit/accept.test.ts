import { describe, expect, test } from "bun:test";
import { preferredRowFormat } from "../../src/query/answer-key.ts";

describe("the Accept header picks CSV only when a range naming text (text/csv or text/*) ranks it above JSON", () => {
  test.each([
    [null, "json"],
    ["", "json"],
    ["*/*", "json"],
    ["application/json", "json"],
    ["text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", "json"],
    ["text/*", "csv"],
    ["text/*;q=0.9, application/json;q=0.5", "csv"],
    ["application/json;q=0.5, TEXT/*;q=0.9", "csv"],
    ["text/*, */*", "json"],
    ["text/*;q=0.8, */*;q=0.8", "json"],
    ["text/*;q=0.8, application/json;q=0.8", "json"],
    ["text/*;q=0.5, */*;q=0.6", "json"],
    ["text/*;q=0, text/csv", "csv"],
    ["text/csv;q=0, text/*", "json"],
    ["text/*;q=0, */*", "json"],
    ["application/json;q=0.5, */*", "json"],
    ["application/*;q=0.1, */*", "json"],
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

describe("the Accept header picks an Arrow stream only when application/vnd.apache.arrow.stream, named exactly, ranks above JSON and any CSV", () => {
  test.each([
    ["application/vnd.apache.arrow.stream", "arrow"],
    ["APPLICATION/VND.APACHE.ARROW.STREAM", "arrow"],
    ["application/vnd.apache.arrow.stream, */*;q=0.1", "arrow"],
    ["application/vnd.apache.arrow.stream;q=0.9, application/json;q=0.5", "arrow"],
    ["application/json;q=0.5, application/vnd.apache.arrow.stream", "arrow"],
    ["application/vnd.apache.arrow.stream, application/json", "json"],
    ["application/vnd.apache.arrow.stream, */*", "json"],
    ["application/vnd.apache.arrow.stream;q=0.5, application/*", "json"],
    ["application/vnd.apache.arrow.stream;q=0", "json"],
    ["application/vnd.apache.arrow.stream;q=0.9, text/csv", "csv"],
    ["application/vnd.apache.arrow.stream, text/csv;q=0.9", "arrow"],
    ["application/vnd.apache.arrow.stream, text/csv", "csv"],
    ["application/vnd.apache.arrow.stream, text/csv;variant=excel;q=0.5", "arrow"],
    ["application/vnd.apache.arrow.stream;q=0.4, text/csv;variant=excel;q=0.5", "csv-excel"],
    // Formats the service does not write keep JSON, as the original did for any Accept.
    ["application/vnd.apache.arrow.file", "json"],
    ["application/vnd.apache.parquet", "json"],
    ["application/x-ndjson", "json"],
    ["application/xml", "json"],
    ["application/*", "json"],
    ["application/vnd.apache.arrow.stream;q=abc", "json"],
  ] as const)("Accept %p → %s", (accept, format) => {
    expect(preferredRowFormat(accept)).toBe(format);
  });
});
