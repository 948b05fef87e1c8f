// The one place where anything thrown while answering becomes a response. It maps:
//   ApiError                     → its status and {"detail":"<CODE>"}
//   RequestValidationError       → 422 {"detail":[items]}
//   Elysia's own query check     → 422 with our FastAPI-exact items (recomputed from the URL)
//   unknown path / wrong method  → 404 {"detail":"Not Found"} / 405 {"detail":"Method Not Allowed"}
//   database unavailable/timeout → 503 {"detail":"DATABASE_UNAVAILABLE"}
//   anything else                → 500 {"detail":"INTERNAL_ERROR"}, the cause in the log only.

import { isDatabaseUnavailable } from "../db/errors.ts";
import type { Logger } from "../log.ts";
import { ClientClosedRequestError } from "./admission.ts";
import { validateProductCostParams } from "../validation/product-cost-params.ts";
import { ApiError, DATABASE_UNAVAILABLE, INTERNAL_ERROR, RequestValidationError } from "./errors.ts";
import { contextOf } from "./request-context.ts";
import { detailResponse } from "./responses.ts";

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

function pathOf(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", url.indexOf("//") + 2);
  const end = url.search(/[?#]/);
  return start === -1 ? "/" : url.slice(start, end === -1 ? undefined : end);
}

/**
 * Starlette's redirect_slashes: a path that matches a route only once its trailing slash is
 * removed gets 307 to that path (query kept, empty body), before any auth. Elysia would
 * otherwise serve it as the route itself. Applied to the FastAPI-compatible endpoint.
 */
export function trailingSlashRedirect(request: Request): Response | null {
  const path = pathOf(request);
  if (path.length < 2 || !path.endsWith("/")) return null;
  const stripped = path.replace(/\/+$/, "");
  if (stripped !== "/external/v1/product-costs") return null;
  const target = new URL(request.url);
  target.pathname = stripped;
  return new Response(null, { status: 307, headers: { location: target.toString() } });
}

export function routeNotMatched(request: Request): Response {
  const allow = ALLOWED_METHODS[pathOf(request)];
  if (allow) return detailResponse(405, "Method Not Allowed", { allow });
  return detailResponse(404, "Not Found");
}

export function createErrorHandler(logger: Logger) {
  return ({ code, error, request }: { code: unknown; error: unknown; request: Request }): Response => {
    if (error instanceof ApiError) {
      if (error.status >= 500) contextOf(request).error = error.cause ?? error;
      return detailResponse(error.status, error.detail, error.headers);
    }
    if (error instanceof RequestValidationError) return detailResponse(422, error.items);
    if (code === "NOT_FOUND") return routeNotMatched(request);
    if (code === "VALIDATION" && (error as { type?: string }).type === "query") {
      const checked = validateProductCostParams(request.url);
      if (!checked.ok) return detailResponse(422, checked.errors);
      logger.error("elysia rejected a query our validator accepted", { request_id: contextOf(request).id, url_length: request.url.length });
    }
    const context = contextOf(request);
    context.error = error;
    if (isDatabaseUnavailable(error)) return detailResponse(503, DATABASE_UNAVAILABLE().detail);
    // Nobody reads this answer; the status is for the log line (nginx's 499).
    if (error instanceof ClientClosedRequestError) return detailResponse(499, "CLIENT_CLOSED_REQUEST");
    return detailResponse(500, INTERNAL_ERROR().detail);
  };
}
