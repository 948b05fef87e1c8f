// Elysia's error hook: what the router and the query schema reject, and everything thrown
// while answering, become responses:
//   the query schema's failures  → 422 {"detail":[items]}, Pydantic's (product-cost-params.ts)
//   unknown path / wrong method  → 404 {"detail":"Not Found"} / 405 {"detail":"Method Not Allowed"}
//   anything else                → as failures.ts classifies it (the cause kept for the log line).

import { ValidationError } from "elysia";
import { classify } from "../failures.ts";
import { validationItems } from "../validation/product-cost-params.ts";
import { contextOf } from "./request-context.ts";
import type { RequestTarget } from "./request-target.ts";
import { detailResponse, SECURITY_HEADERS } from "./responses.ts";

/** Paths served, with the methods each accepts, for 405 and its Allow header. */
const ALLOWED_METHODS: Record<string, string> = {
  "/external/v1/product-costs": "GET, HEAD",
  "/healthz": "GET, HEAD",
  "/readyz": "GET, HEAD",
  "/openapi.json": "GET, HEAD",
  "/docs": "GET, HEAD",
  "/docs/assets/swagger-ui-bundle.js": "GET, HEAD",
  "/docs/assets/swagger-ui.css": "GET, HEAD",
};

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
  if (stripped !== "/external/v1/product-costs") return null;
  const location = stripped + (query === undefined ? "" : "?" + query);
  return new Response(null, { status: 307, headers: { ...SECURITY_HEADERS, location } });
}

export function routeNotMatched(request: Request): Response {
  const allow = ALLOWED_METHODS[contextOf(request).target.path];
  // An allowed method that matched nothing: the route is switched off (DOCS_ENABLED=false).
  if (allow && !allow.split(", ").includes(request.method)) return detailResponse(405, "Method Not Allowed", { allow });
  return detailResponse(404, "Not Found");
}

export function createErrorHandler() {
  return ({ code, error, request }: { code: unknown; error: unknown; request: Request }): Response => {
    // Only the query's: a response that failed its schema is our fault, a 500.
    if (error instanceof ValidationError && error.type === "query") return detailResponse(422, validationItems(error.all));
    if (code === "NOT_FOUND") return routeNotMatched(request);
    const failure = classify(error);
    // A 4xx is the client's doing: its log line needs no cause.
    if (failure.status >= 499) contextOf(request).error = error;
    return detailResponse(failure.status, failure.detail, failure.headers);
  };
}
