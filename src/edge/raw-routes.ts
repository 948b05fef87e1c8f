// Dot segments never route to another path (issue 31): `/external/%2e%2e/metrics`,
// `/external/v1/../../metrics` and their kin answer 404, as the original FastAPI app does,
// so a proxy that forwards only `/external/` by prefix without normalising (HAProxy
// `path_beg`, Envoy's default) exposes nothing else.
//
// Bun 1.4.5 resolves dot segments (literal or %2e in any case) and turns `\` into `/` in
// request.url whenever the Host header parses, and keeps the raw target nowhere a handler
// can read it. Its router, though, matches the raw target. So the server registers every
// served path (and the endpoint's subtree, where the trailing-slash redirect lives) as a Bun
// route, and each request tells the handler which pattern the raw target matched (none: the
// fallback). A normalised path that belongs to another pattern than the raw one was
// rewritten on the way: 404. When the Host does not parse, request.url is the raw target
// itself, and its dot segments are read directly.

import { PRODUCT_COSTS_PATH } from "./routes.ts";

/** What Bun's router made of the raw target: the pattern it matched, null for none (the fallback). */
export interface RawRoute {
  readonly pattern: string | null;
}

/** The endpoint's subtree: the trailing-slash redirect answers there. */
const ENDPOINT_SUBTREE = PRODUCT_COSTS_PATH + "/*";

/**
 * The patterns the server registers with Bun's router: each served path with and without a
 * trailing slash (Elysia serves `/metrics/` as `/metrics`, so `/metrics/.` must not reach
 * it), and the endpoint's subtree.
 */
export function rawRoutePatterns(servedPaths: readonly string[]): string[] {
  const paths = new Set(servedPaths.filter((p) => p !== PRODUCT_COSTS_PATH).flatMap((p) => [p, p + "/"]));
  return [...paths, PRODUCT_COSTS_PATH, ENDPOINT_SUBTREE];
}

const matches = (pattern: string, path: string) => (pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern);

/**
 * Whether normalising the raw target moved it into another pattern than the one Bun's router
 * matched it with. Inside the endpoint's subtree (`/external/v1/product-costs/x/..`) a dot
 * segment stays where it was: redirected to the endpoint, as its trailing slash would be.
 */
export function leftItsRawRoute(raw: RawRoute, routedPath: string, patterns: readonly string[]): boolean {
  const owner = patterns.find((p) => matches(p, routedPath)) ?? null;
  return owner !== raw.pattern;
}

/**
 * Whether a request walked to its path with dot segments: its path as Bun gave it (`url`)
 * holds one, or (`raw`: Bun's router ran) normalising moved it into another pattern. Bun
 * leaves `url` raw when it cannot use the Host (a bare target, or a string no URL parser
 * takes, such as `http://[::1/p`); its router matches no pattern for a target with `#` in
 * its path, so for such a raw URL the dot segments it holds are the whole answer.
 */
export function walkedWithDots(url: string, givenPath: string, routedPath: string, raw: RawRoute | undefined, patterns: readonly string[]): boolean {
  if (hasDotSegment(givenPath)) return true;
  if (raw === undefined) return false;
  const rawUrl = url.startsWith("/") || !URL.canParse(url);
  if (rawUrl && /^[^?]*#/.test(url)) return false;
  return leftItsRawRoute(raw, routedPath, patterns);
}

// `.` or `..`, each dot literal or %2e in any case (WHATWG URL resolves all of these).
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

/** Whether a raw path (percent-escapes kept) holds a dot segment; `\` separates as `/` does in http URLs. */
export function hasDotSegment(rawPath: string): boolean {
  return rawPath.split(/[/\\]/).some((segment) => DOT_SEGMENT.test(segment));
}
