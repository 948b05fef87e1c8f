// The one place where anything thrown while answering becomes a response. It maps:
//   ApiError                     → its status and {"detail":"<CODE>"}
//   the query schema's failures  → 422 {"detail":[items]}, Pydantic's (product-cost-params.ts)
//   unknown path / wrong method  → 404 {"detail":"Not Found"} / 405 {"detail":"Method Not Allowed"}
//   database unavailable/timeout → 503 {"detail":"DATABASE_UNAVAILABLE"}
//   anything else                → 500 {"detail":"INTERNAL_ERROR"}, the cause in the log only.

import { ValidationError } from "elysia";
import { isDatabaseUnavailable } from "../db/errors.ts";
import { validationItems } from "../validation/product-cost-params.ts";
import { ClientClosedRequestError } from "./admission.ts";
import { ApiError, DATABASE_UNAVAILABLE, INTERNAL_ERROR } from "./errors.ts";
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

/** The status a failure answers with (503 when the database is unavailable, else 500), also for the log of a body cut short. */
export function failureStatus(error: unknown): 500 | 503 {
  return isDatabaseUnavailable(error) ? 503 : 500;
}

/** What a 503 DATABASE_UNAVAILABLE tells clients to wait before trying again. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

export function createErrorHandler() {
  return ({ code, error, request }: { code: unknown; error: unknown; request: Request }): Response => {
    if (error instanceof ApiError) {
      if (error.status >= 500) contextOf(request).error = error.cause ?? error;
      return detailResponse(error.status, error.detail, error.headers);
    }
    // Only the query's: a response that failed its schema is our fault, a 500.
    if (error instanceof ValidationError && error.type === "query") {
      return detailResponse(422, validationItems(error.all));
    }
    if (code === "NOT_FOUND") return routeNotMatched(request);
    const context = contextOf(request);
    context.error = error;
    // Transient by nature (a restart, a migration, a grant away): clients may retry.
    if (failureStatus(error) === 503) return detailResponse(503, DATABASE_UNAVAILABLE().detail, { "retry-after": String(DATABASE_RETRY_AFTER_SECONDS) });
    // Nobody reads this answer; the status is for the log line (nginx's 499).
    if (error instanceof ClientClosedRequestError) return detailResponse(499, "CLIENT_CLOSED_REQUEST");
    return detailResponse(500, INTERNAL_ERROR().detail);
  };
}
