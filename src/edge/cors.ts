// Cross-origin reads (CORS, the Fetch standard), off unless CORS_ALLOWED_ORIGINS lists the
// origins of the browser pages that may call the API, for a dashboard served from another
// origin. Part of the edge (server.ts): a preflight is answered before routing, and every
// answer of the API's listener says Vary: Origin, so a cache never hands one origin's answer
// to another.
//
// An origin not listed is answered exactly as without CORS (its preflight 405, as Starlette
// answered OPTIONS; no Access-Control-* header), and its browser refuses the read. The key
// stays the protection: CORS only lets a listed page read what its Bearer key may read.

import { PRODUCT_COSTS_PATH } from "./routes.ts";
import { parseCorsOrigins } from "../settings/cors-origins.ts";

/** The headers a page's script may send beyond the safelisted ones: its key and its conditions. */
const ALLOWED_HEADERS = "Authorization, If-None-Match, If-Match, Accept, X-Request-Id, traceparent";
/** The headers a page's script may read beyond the safelisted ones (Content-Type and the like). */
const EXPOSED_HEADERS = "ETag, X-Data-Changed-At, X-Request-Id, Content-Disposition, Retry-After, RateLimit, RateLimit-Policy, X-Demo-Data, traceresponse";
/** Seconds a browser may keep a preflight's answer: Chromium's own cap, two hours. */
export const PREFLIGHT_MAX_AGE_S = 7200;
/** The paths a page may read: the endpoint, and the document its client is generated from. */
const CORS_PATHS = new Set([PRODUCT_COSTS_PATH, "/openapi.json"]);
const READ_METHODS = new Set(["GET", "HEAD"]);

export interface Cors {
  /** The answer to a CORS preflight from a listed origin for a path a page may read; undefined otherwise. */
  preflight(request: Request, path: string): Response | undefined;
  /** The headers every answer of the listener gets (Access-Control-* for a listed origin on a page's path), and Vary's Origin. */
  headers(request: Request, path: string): Record<string, string>;
}

/** The CORS of a listener, from CORS_ALLOWED_ORIGINS (already checked); undefined when unset (off). */
export function createCors(setting: string | undefined): Cors | undefined {
  if (!setting) return undefined;
  const { origins } = parseCorsOrigins(setting);
  const listed = (origin: string | null): origin is string => origin !== null && (origins === "*" ? origin !== "null" : origins.has(origin));
  return {
    preflight(request, path) {
      const origin = request.headers.get("origin");
      const method = request.headers.get("access-control-request-method");
      if (request.method !== "OPTIONS" || method === null || !READ_METHODS.has(method) || !CORS_PATHS.has(path) || !listed(origin)) return undefined;
      return new Response(null, {
        status: 204,
        headers: {
          "access-control-allow-origin": origin,
          "access-control-allow-methods": "GET, HEAD",
          "access-control-allow-headers": ALLOWED_HEADERS,
          "access-control-max-age": String(PREFLIGHT_MAX_AGE_S),
          vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        },
      });
    },
    headers(request, path): Record<string, string> {
      const origin = request.headers.get("origin");
      // A preflight is answered whole by preflight() or not at all: as without CORS.
      if (request.method === "OPTIONS" || !CORS_PATHS.has(path) || !listed(origin)) return {};
      return { "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED_HEADERS };
    },
  };
}

/** `vary` with Origin added once (Vary: Accept, Accept-Encoding becomes Accept, Accept-Encoding, Origin). */
export function varyWithOrigin(vary: string | null): string {
  if (!vary) return "Origin";
  return vary.split(",").some((v) => v.trim().toLowerCase() === "origin" || v.trim() === "*") ? vary : `${vary}, Origin`;
}
