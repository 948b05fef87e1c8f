import { describe, expect, test } from "bun:test";
import { bearerCredentials, pythonStrip } from "../../src/key/api-keys.ts";

describe("bearerCredentials parses like FastAPI's HTTPBearer(auto_error=False)", () => {
  test.each([
    ["Bearer abc", "abc"],
    ["bearer abc", "abc"],
    ["BeArEr abc", "abc"],
    ["Bearer   abc  ", "abc"],
    ["Bearer abc def", "abc def"],
    ["Bearer \u00a0abc\u0085", "abc"],
    ["Bearer \x1cabc\x1f", "abc"],
    ["Bearer a\tb", "a\tb"],
  ])("%p → %p", (header, expected) => {
    expect(bearerCredentials(header)).toBe(expected);
  });

  test.each([[null], [undefined], [""], ["Bearer"], ["Bearer "], ["Bearer \t "], ["Basic abc"], ["Bearer\tabc"], [" Bearer abc"], ["Token abc"]])(
    "%p → no credentials",
    (header) => {
      expect(bearerCredentials(header as string | null | undefined)).toBeNull();
    },
  );

  test("strips only what Python's str.strip() strips", () => {
    expect(pythonStrip("\ufeffkey\ufeff")).toBe("\ufeffkey\ufeff");
    expect(pythonStrip(" \t\n\r\x0b\x0ckey \t")).toBe("key");
  });
});
