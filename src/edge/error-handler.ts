// Elysia's error hook: what the router and the query schema reject, and everything thrown
// while answering, become failures, answered by the request's exchange (exchange.ts: failed):
//   the query schema's failures  → 422 {"detail":[items]}, Pydantic's (product-cost-params.ts)
//   unknown path / wrong method  → 404 {"detail":"Not Found"} / 405 {"detail":"Method Not Allowed"}
//   anything else                → what failures.ts says it is.

import { ValidationError } from "elysia";
import { METHOD_NOT_ALLOWED, NOT_FOUND, VALIDATION_FAILED } from "../failures.ts";
import { questionOf, type RawParams } from "../query/product-cost-params.ts";
import { exchangeOf } from "../request/exchange.ts";
import { allowedMethods } from "./routes.ts";

function routeNotMatched(request: Request, routes: readonly { method: string; path: string }[]) {
  const allow = allowedMethods(routes, exchangeOf(request).target.path);
  return allow ? METHOD_NOT_ALLOWED(allow) : NOT_FOUND();
}

/** The 422 items of a query the schema rejected: every parameter's, as Pydantic lists them. */
function rejected(params: RawParams) {
  const verdict = questionOf(params);
  return "items" in verdict ? verdict.items : [];
}

/** `routes`: the app's own, read when a request matches none (for 405 and its Allow header). */
export function createErrorHandler(routes: () => readonly { method: string; path: string }[]) {
  return ({ code, error, request }: { code: unknown; error: unknown; request: Request }): Response => {
    const exchange = exchangeOf(request);
    // Only the query's: a response that failed its schema is our fault, a 500.
    if (error instanceof ValidationError && error.type === "query") return exchange.failed(VALIDATION_FAILED(rejected(error.value as RawParams)));
    if (code === "NOT_FOUND") return exchange.failed(routeNotMatched(request, routes()));
    return exchange.failed(error);
  };
}
