// The one query-string parser of the service: validation, the 422 `input` values and the
// handler all read the query through it. It reads a query as the FastAPI original does,
// Starlette's QueryParams over Python's urllib.parse.parse_qsl(query, keep_blank_values=True):
//   - pairs are separated by "&" only (";" is an ordinary character); empty pairs are skipped;
//   - a pair splits at its first "="; a key without "=" has the value "" (so does "a=");
//     a bare "=" is the key "" with the value "";
//   - "+" is a space, then percent-escapes are decoded: a run of %XX bytes is read as UTF-8,
//     each invalid sequence becoming U+FFFD (a BOM is kept); "%zz", "%4" and a lone "%" stay
//     as they are;
//   - nothing else is special: a leading "?" (from a target like /p??a=1) belongs to the
//     first key, which is then "?a". (URLSearchParams' string constructor would drop it.)
// The last value of a repeated key wins (QueryParams.get). Tested against parse_qsl itself:
// tests/fixtures/parse-qsl-vectors.jsonl.

const UTF8 = new TextDecoder("utf-8", { ignoreBOM: true });

function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  if (code >= 65 && code <= 70) return code - 55; // A-F
  if (code >= 97 && code <= 102) return code - 87; // a-f
  return -1;
}

/** Python's urllib.parse.unquote_plus(text, encoding="utf-8", errors="replace"). */
export function unquotePlus(text: string): string {
  const plain = text.replaceAll("+", " ");
  if (!plain.includes("%")) return plain;
  let out = "";
  let bytes: number[] = [];
  const flush = () => {
    if (bytes.length) out += UTF8.decode(new Uint8Array(bytes));
    bytes = [];
  };
  for (let i = 0; i < plain.length; i++) {
    const code = plain.charCodeAt(i);
    if (code === 37 /* % */ && i + 2 < plain.length) {
      const hi = hexValue(plain.charCodeAt(i + 1));
      const lo = hexValue(plain.charCodeAt(i + 2));
      if (hi !== -1 && lo !== -1) {
        bytes.push(hi * 16 + lo);
        i += 2;
        continue;
      }
    }
    if (code < 0x80) {
      // An ASCII character joins the byte run: Python decodes each ASCII stretch as a whole.
      bytes.push(code);
    } else {
      // Python leaves characters outside ASCII as they are, between the decoded stretches.
      flush();
      out += plain[i];
    }
  }
  flush();
  return out;
}

/** parse_qsl(query, keep_blank_values=True): every pair, in order. */
export function parseQueryString(query: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const field of query.split("&")) {
    if (field === "") continue;
    const eq = field.indexOf("=");
    const name = eq === -1 ? field : field.slice(0, eq);
    const value = eq === -1 ? "" : field.slice(eq + 1);
    pairs.push([unquotePlus(name), unquotePlus(value)]);
  }
  return pairs;
}

/** The last value of each key, as Starlette's QueryParams.get() returns it. */
export function lastValues(query: string | undefined): Map<string, string> {
  const values = new Map<string, string>();
  if (query) for (const [key, value] of parseQueryString(query)) values.set(key, value);
  return values;
}
