// The request target (path and query) as the service reads it, derived once when a request
// arrives, with no part played by the Host header.
//
// Bun builds request.url from the Host header and the target. With a Host it can parse, the
// URL is absolute and already normalised (dot segments resolved, raw bytes percent-encoded).
// With an empty, missing or malformed Host (`Host:`, `a:99999`, `a b`, `[::1`, HTTP/1.0
// without Host) it is the bare target ("/healthz"), and for CONNECT the authority
// ("host:443"). `new URL(request.url)` throws on several of these, so nothing here or
// downstream parses the URL Bun built: the path and query are cut out of it by hand, and
// the app routes a copy of the request whose URL has a fixed origin.
//
// A fragment (`#...`) is not part of a request target (RFC 9112 §3.2); Bun passes it on.
// It is dropped, as uvicorn's httptools parser drops it, so `/p#?a=1` is the path /p with
// no query, and `/p?a=1#b` has the query `a=1`.

export interface RequestTarget {
  /** The path, starting with "/", as Bun passed it (percent-escapes kept). */
  path: string;
  /** Everything after the first "?" up to a "#"; undefined when the target has no "?". */
  query: string | undefined;
}

/** The origin of every URL the app sees: routing never depends on what the client sent as Host. */
export const INTERNAL_ORIGIN = "http://localhost";

// scheme "://" authority, as in every absolute URL Bun builds.
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The target of a request whose URL Bun built as `url`; null when it has no path (CONNECT's authority form). */
export function requestTarget(url: string): RequestTarget | null {
  let rest: string;
  if (url.startsWith("/")) {
    rest = url;
  } else {
    const prefix = SCHEME_AND_AUTHORITY.exec(url);
    if (!prefix) return null;
    rest = url.slice(prefix[0].length);
    if (!rest.startsWith("/")) rest = "/" + rest;
  }
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const mark = rest.indexOf("?");
  if (mark === -1) return { path: rest, query: undefined };
  return { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

/**
 * The URL the app routes: the fixed origin, the path and the query (no fragment), normalised
 * by the URL parser (dot segments resolved, bytes outside ASCII percent-encoded). Normalised
 * here because Bun's `new Request(url, request)` keeps the string as given, and a raw U+FFFD
 * (what Bun makes of a byte that is not UTF-8 when the Host is malformed) would then reach
 * a header such as a 307's Location, which refuses it. Behind a fixed origin any path and
 * query parse, so this does not throw.
 */
export function internalUrl(target: RequestTarget): string {
  return new URL(INTERNAL_ORIGIN + target.path + (target.query === undefined ? "" : "?" + target.query)).href;
}
