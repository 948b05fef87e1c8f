// Query-string parsing as Starlette does it (urllib.parse.parse_qsl with
// keep_blank_values=True, then a dict in which the last value of a key wins).
// URLSearchParams follows the same rules: `+` is a space, a malformed escape stays
// literal, bytes that are not UTF-8 become U+FFFD, a key with no `=` has the value "".

/** Last value of each key, as Starlette's QueryParams.get() returns it. */
export function lastValues(requestUrl: string): Map<string, string> {
  const mark = requestUrl.indexOf("?");
  const values = new Map<string, string>();
  if (mark === -1) return values;
  const hash = requestUrl.indexOf("#", mark);
  const raw = requestUrl.slice(mark + 1, hash === -1 ? undefined : hash);
  for (const [key, value] of new URLSearchParams(raw)) values.set(key, value);
  return values;
}
