import { describe, expect, test } from "bun:test";
import { CsvError, CsvReader } from "../../src/load/csv.ts";
import { parseCsv } from "../support/parse-csv.ts";

const values = (text: string) => parseCsv(text).map((r) => r.fields.map((f) => (f.quoted ? `"${f.value}"` : f.value)));

/** The same text fed in pieces of `size` characters. */
function inPieces(text: string, size: number) {
  const reader = new CsvReader();
  const out = [];
  for (let i = 0; i < text.length; i += size) out.push(...reader.push(text.slice(i, i + size)));
  return [...out, ...reader.end()];
}

/** What the reader throws for `text` in pieces of `size`: its message, line and field. */
function refusal(text: string, size: number): [string, number, number | undefined] | "read without an error" {
  try {
    inPieces(text, size);
  } catch (err) {
    if (err instanceof CsvError) return [err.message, err.line, err.field];
    throw err;
  }
  return "read without an error";
}

describe("RFC 4180 CSV reader", () => {
  test.each([
    ["a,b\n1,2\n", [["a", "b"], ["1", "2"]]],
    ["a,b\r\n1,2", [["a", "b"], ["1", "2"]]],
    ["a,b\r1,2\r", [["a", "b"], ["1", "2"]]],
    ['"x, y","say ""hi"""\n', [['"x, y"', '"say "hi""']]],
    ['"multi\nline",2\n', [['"multi\nline"', "2"]]],
    ["a,,\n", [["a", "", ""]]],
    ["a,", [["a", ""]]],
    ['a,""\n', [["a", '""']]],
    ['a,""', [["a", '""']]],
    ["\ufeffa\n\n\nb\n", [["a"], ["b"]]],
    ["\r\n\r\na\r\n", [["a"]]],
  ])("%p", (text, expected) => {
    expect(values(text)).toEqual(expected);
  });

  test.each([
    ['"open\n', "unterminated quoted field", 1],
    ['a\nb"c\n', 'a quote inside an unquoted field (quote the whole field and double the ")', 2],
    ['a\r\n"x\r\ny"z\n', "a quoted field must be followed by a comma or the end of the line", 3],
  ])("rejects %p with the line", (text, message, line) => {
    let thrown: unknown;
    try {
      parseCsv(text);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CsvError);
    expect([(thrown as CsvError).message, (thrown as CsvError).line]).toEqual([message, line]);
  });

  test.each([
    ["in an unquoted field", "a,b\nc,d\u0000\n", 2, 1],
    ["starting a field", "a,b\n\u0000,d\n", 2, 0],
    ["on the third line of a quoted field", 'a,"b\r\nc\rd\u0000"\n', 3, 1],
    ["after a closing quote", 'a,"b"\u0000\n', 1, 1],
    ["after a lone CR", "a\r\u0000\n", 2, 0],
  ])("refuses a NUL byte %s, whole or in pieces, naming its line and field", (_, text, line, index) => {
    for (const size of [text.length, 3, 1]) expect([size, refusal(text, size)]).toEqual([size, ["a NUL byte (0x00), which PostgreSQL text cannot hold", line, index]]);
  });

  // The bounds that keep a reader's memory small whatever its input (docs/embedded-database.md).
  const field = (n: number) => "x".repeat(n);
  test.each([
    ["an unquoted field of 1,048,577 characters", `a\n${field(1_048_577)}\n`, "a field longer than 1,048,576 characters", 2, 0],
    ["a quoted field of 1,048,577 characters, starting on line 2", `a,b\n1,"\n${field(1_048_576)}"\n`, "a field longer than 1,048,576 characters", 2, 1],
    ["the last field, unended, of 1,048,577 characters", `a,${field(1_048_577)}`, "a field longer than 1,048,576 characters", 1, 1],
    ["a row of 4,194,305 characters", `a\n${[field(1_048_576), field(1_048_576), field(1_048_576), field(1_048_574)].join(",")}\n`, "a row longer than 4,194,304 characters", 2, undefined],
    ["a row of 1,001 fields", `a\n${",".repeat(1_000)}\n`, "more than 1,000 fields", 2, undefined],
  ])("refuses %p, whole or in pieces, naming its line (and field)", (_, text, message, line, index) => {
    for (const size of [text.length, 65_536, 7]) expect([size, refusal(text, size)]).toEqual([size, [message, line, index]]);
  });

  test("reads a field of 1,048,576 characters, a row of 4,194,304 and a row of 1,000 fields, whole or in pieces", () => {
    const wide = [field(1_048_576), field(1_048_576), field(1_048_576), field(1_048_573)].join(","); // 4,194,304 with its commas
    const text = `"${field(1_048_576)}"\n${wide}\n${",".repeat(999)}\n`;
    for (const size of [text.length, 65_536]) {
      expect(inPieces(text, size).map((r) => [r.line, r.fields.length, r.fields.reduce((n, f) => n + f.value.length, 0)])).toEqual([
        [1, 1, 1_048_576],
        [2, 4, 4_194_301],
        [3, 1_000, 0],
      ]);
    }
  });

  test("the records before an error in the same piece are read first, in the file's order", () => {
    const reader = new CsvReader();
    const read: string[] = [];
    expect(() => {
      for (const record of reader.push('a\nb\nc"\n')) read.push(record.fields[0]!.value);
    }).toThrow(new CsvError('a quote inside an unquoted field (quote the whole field and double the ")', 3));
    expect(read).toEqual(["a", "b"]);
  });

  test("each record knows the line it starts on, across quoted line breaks of every kind and blank lines", () => {
    const text = 'h1,h2\r\n1,"two\r\nlines"\r\n\r\n3,"a\nb\rc"\n4,x\r5,y';
    expect(parseCsv(text).map((r) => [r.line, r.fields.map((f) => f.value)])).toEqual([
      [1, ["h1", "h2"]],
      [2, ["1", "two\r\nlines"]],
      [5, ["3", "a\nb\rc"]],
      [8, ["4", "x"]],
      [9, ["5", "y"]],
    ]);
  });

  test("any split into pieces reads the same records as the whole text", () => {
    const text = '\ufeffid,name,note\r\n1,"Lamp, ""big""","two\r\nlines"\r\n2,,\n\n3,"",x\r4,plain,"end"';
    const whole = parseCsv(text);
    for (const size of [1, 2, 3, 5, 7, 11, 64]) expect([size, inPieces(text, size)]).toEqual([size, whole]);
  });
});
