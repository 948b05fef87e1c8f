// Reads the API key out of an Authorization header exactly as FastAPI's
// HTTPBearer(auto_error=False) does: split at the first space, scheme "Bearer" compared
// case-insensitively, credentials stripped of surrounding whitespace (Python's str.strip()).

// Python's str.isspace() characters within Latin-1, the range a header value can hold.
const PY_WHITESPACE = new Set(["\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", " ", "\x85", "\xa0"]);

export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_WHITESPACE.has(text[start]!)) start++;
  while (end > start && PY_WHITESPACE.has(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/** The presented key, or null when the header is absent, not Bearer, or has no credentials. */
export function bearerCredentials(header: string | null | undefined): string | null {
  if (!header) return null;
  const space = header.indexOf(" ");
  const scheme = space === -1 ? header : header.slice(0, space);
  const credentials = space === -1 ? "" : pythonStrip(header.slice(space + 1));
  if (!scheme || !credentials) return null;
  if (scheme.toLowerCase() !== "bearer") return null;
  return credentials;
}
