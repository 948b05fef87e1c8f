// What the app routes, beyond what Elysia's router says itself: the endpoint's path, the
// 405 of a served path asked with another method (its Allow header read from the routes the
// app really has, so a route switched off is simply not served: 404), and Starlette's
// trailing-slash redirect.

import { temporaryRedirect } from "../request/responses.ts";
import type { RequestTarget } from "../request/request-target.ts";

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
