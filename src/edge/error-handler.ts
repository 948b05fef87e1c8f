// Elysia's error hook: what the router and the query schema reject, and everything thrown
// while answering, become responses:
//   the query schema's failures  → 422 {"detail":[items]}, Pydantic's (product-cost-params.ts)
//   unknown path / wrong method  → 404 {"detail":"Not Found"} / 405 {"detail":"Method Not Allowed"}
//   anything else                → as the request's exchange makes it (exchange.ts: failed).

import { ValidationError } from "elysia";
import { validationItems } from "../query/product-cost-params.ts";
import { exchangeOf } from "../request/exchange.ts";
import { detailResponse } from "../request/responses.ts";
import { allowedMethods } from "./routes.ts";

function routeNotMatched(request: Request, routes: readonly { method: string; path: string }[]): Response {
  const allow = allowedMethods(routes, exchangeOf(request).target.path);
  if (allow) return detailResponse(405, "Method Not Allowed", { allow });
  return detailResponse(404, "Not Found");
}

/** `routes`: the app's own, read when a request matches none (for 405 and its Allow header). */
export function createErrorHandler(routes: () => readonly { method: string; path: string }[]) {
  return ({ code, error, request }: { code: unknown; error: unknown; request: Request }): Response => {
    // Only the query's: a response that failed its schema is our fault, a 500.
    if (error instanceof ValidationError && error.type === "query") return detailResponse(422, validationItems(error.all));
    if (code === "NOT_FOUND") return routeNotMatched(request, routes());
    return exchangeOf(request).failed(error);
  };
}
