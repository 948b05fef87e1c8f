// Wraps the Elysia app into the fetch handler the server runs: gives each request its
// id (X-Request-Id echoed when sane, else generated), adds the standard headers, and
// writes one log line per request once its body has been sent (streams included).

import { errorFields, type Logger } from "../log.ts";
import type { App } from "./app.ts";
import { trailingSlashRedirect } from "./error-handler.ts";
import { attachContext, type RequestContext } from "./request-context.ts";
import { oversizedRequest, routable } from "./request-guard.ts";

// An incoming request id is echoed only if it is short and plain, so logs cannot be forged.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export type FetchHandler = (request: Request) => Promise<Response>;

/** Called once per request when its body is done; `seconds` is the same duration the log line shows. */
export type RequestObserver = (o: { request: Request; response: Response; context: RequestContext; seconds: number }) => void;

export function createHandler(app: App, logger: Logger, observe?: RequestObserver): FetchHandler {
  return async (arrived) => {
    const request = routable(arrived);
    const incoming = request.headers.get("x-request-id");
    const context: RequestContext = {
      id: incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
      startedAt: performance.now(),
    };
    attachContext(request, context);
    const response = oversizedRequest(request) ?? trailingSlashRedirect(request) ?? (await app.handle(request));
    response.headers.set("x-request-id", context.id);
    const done = context.bodyDone ?? Promise.resolve();
    void done.then(() => {
      const seconds = (performance.now() - context.startedAt) / 1000;
      logRequest(logger, request, response.status, context, seconds);
      observe?.({ request, response, context, seconds });
    });
    return response;
  };
}

function logRequest(logger: Logger, request: Request, status: number, context: RequestContext, seconds: number): void {
  const url = new URL(request.url);
  const fields: Record<string, unknown> = {
    request_id: context.id,
    method: request.method,
    // A hostile path may be 64 KiB long: one request must not write a 64 KiB log line.
    path: url.pathname.length > 256 ? url.pathname.slice(0, 256) + "…" : url.pathname,
    status,
    duration_ms: Math.round(seconds * 10000) / 10,
  };
  if (context.rows !== undefined) fields.rows = context.rows;
  if (context.keyFingerprint) fields.key = context.keyFingerprint;
  if (context.error !== undefined) Object.assign(fields, errorFields(context.error));
  const level = status >= 500 || (context.error !== undefined && status < 400) ? "error" : "info";
  logger[level]("request", fields);
}
