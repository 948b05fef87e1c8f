// The edge stage's checks of a request before the app routes it (src/service/pipeline.ts; run by
// edge/server.ts): its size, the path its raw target walked, the trailing-slash redirect, and
// the methods a served path answers (405).

import { temporaryRedirect, type RequestTarget } from "../request/exchange.ts";
import { HEADERS_TOO_LARGE, URI_TOO_LONG, type ApiError } from "../failures.ts";

// What the app routes, beyond what Elysia's router says itself: the endpoint's path, the
// 405 of a served path asked with another method (its Allow header read from the routes the
// app really has, so a route switched off is simply not served: 404), and Starlette's
// trailing-slash redirect.

export const PRODUCT_COSTS_PATH = "/external/v1/product-costs";

/** The routes for operators and their tools (health, readiness, metrics, the API's docs): MONITORING_PORT serves them apart. */
export function isMonitoringPath(path: string): boolean {
  const p = path.length > 1 ? path.replace(/\/+$/, "") : path;
  return p === "/healthz" || p === "/readyz" || p === "/metrics" || p === "/openapi.json" || p === "/docs" || p.startsWith("/docs/");
}

/** The methods `path` is served with ("GET, HEAD"), or undefined when it is not served. */
export function allowedMethods(routes: readonly { method: string; path: string }[], path: string): string | undefined {
  const methods = new Set(routes.filter((r) => r.path === path).map((r) => r.method.toUpperCase()));
  if (methods.has("GET")) methods.add("HEAD"); // Bun answers HEAD with GET's route, without the body
  return methods.size ? [...methods].sort((a, b) => (a === "GET" ? -1 : b === "GET" ? 1 : a.localeCompare(b))).join(", ") : undefined;
}

/**
 * Starlette's redirect_slashes: a path that matches a route only once its trailing slash is
 * removed gets 307 to that path (query kept, empty body), before any auth. Elysia would
 * otherwise serve it as the route itself. Applied to the FastAPI-compatible endpoint.
 * The Location is relative (RFC 9110 §10.2.2): Starlette echoes the Host header into it,
 * which would let a client choose where it points.
 */
export function trailingSlashRedirect(target: RequestTarget): Response | null {
  const { path, query } = target;
  if (path.length < 2 || !path.endsWith("/")) return null;
  const stripped = path.replace(/\/+$/, "");
  if (stripped !== PRODUCT_COSTS_PATH) return null;
  const location = stripped + (query === undefined ? "" : "?" + query);
  return temporaryRedirect(location);
}

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

// What the app must not see as it arrives: size limits, refused with a JSON body. A request
// target (path and query) over 64 KiB is 414 {"detail":"URI Too Long"}, header fields over
// 64 KiB in total are 431 {"detail":"Request Header Fields Too Large"}. The executable's HTTP
// parser accepts up to 1 MiB (build.sh --max-http-header-size) so that these answers are ours;
// past 1 MiB, or past about 200 header lines, Bun answers 431 with an empty body and closes.

export const MAX_REQUEST_TARGET_BYTES = 64 * 1024;
export const MAX_HEADER_BYTES = 64 * 1024;

/** The 414/431 failure of a request over the limits, or null. */
export function oversizedRequest(target: RequestTarget, headers: Headers): ApiError | null {
  const targetLength = target.path.length + (target.query === undefined ? 0 : target.query.length + 1);
  if (targetLength > MAX_REQUEST_TARGET_BYTES) return URI_TOO_LONG();
  let size = 0;
  // As sent: "name: value\r\n" per field.
  headers.forEach((value, name) => {
    size += name.length + value.length + 4;
  });
  if (size > MAX_HEADER_BYTES) return HEADERS_TOO_LARGE();
  return null;
}
