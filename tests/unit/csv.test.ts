import { describe, expect, test } from "bun:test";
import { CsvError, parseCsv } from "../../src/load/csv.ts";

const values = (text: string) => [...parseCsv(text)].map((r) => r.map((f) => (f.quoted ? `"${f.value}"` : f.value)));

describe("RFC 4180 CSV reader", () => {
  test.each([
    ["a,b\n1,2\n", [["a", "b"], ["1", "2"]]],
    ["a,b\r\n1,2", [["a", "b"], ["1", "2"]]],
    ['"x, y","say ""hi"""\n', [['"x, y"', '"say "hi""']]],
    ['"multi\nline",2\n', [['"multi\nline"', "2"]]],
    ["a,,\n", [["a", "", ""]]],
    ['a,""\n', [["a", '""']]],
    ["\ufeffa\n\n\nb\n", [["a"], ["b"]]],
  ])("%p", (text, expected) => {
    expect(values(text)).toEqual(expected);
  });

  test.each([['"open\n'], ['a"b\n'], ['"x"y\n']])("rejects %p", (text) => {
    expect(() => [...parseCsv(text)]).toThrow(CsvError);
  });
});
