// Wraps the Elysia app into the fetch handler the server runs: reads the request's target
// once (never trusting the Host header), gives each request its id (X-Request-Id echoed
// when sane, else generated), and writes one log line per request once its body has been
// sent (streams included).
//
// Nothing a request does may stop the process: the app's failures become a 500 here, and
// the work after the answer (log line, metrics) is guarded so that its failure is logged,
// never thrown into the event loop.

import { errorFields, type Logger } from "../log.ts";
import type { App } from "./app.ts";
import { trailingSlashRedirect } from "./error-handler.ts";
import { attachContext, type RequestContext } from "./request-context.ts";
import { oversizedRequest } from "./request-guard.ts";
import { internalUrl, requestTarget } from "./request-target.ts";
import { detailResponse } from "./responses.ts";

// An incoming request id is echoed only if it is short and plain, so logs cannot be forged.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LOGGED_PATH_MAX = 256;

export type FetchHandler = (request: Request) => Promise<Response>;

/** Called once per request when its body is done; `seconds` is the same duration the log line shows. */
export type RequestObserver = (o: { request: Request; response: Response; context: RequestContext; seconds: number }) => void;

export function createHandler(app: App, logger: Logger, observe?: RequestObserver): FetchHandler {
  return async (arrived) => {
    const incoming = arrived.headers.get("x-request-id");
    const context: RequestContext = {
      id: incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
      startedAt: performance.now(),
      target: { path: "/", query: undefined },
    };
    let request = arrived;
    let response: Response;
    try {
      const target = requestTarget(arrived.url);
      if (target === null) {
        // CONNECT's authority form (host:443): no path to serve. uvicorn answers 400 too.
        response = detailResponse(400, "Bad Request");
      } else {
        request = new Request(internalUrl(target), arrived);
        // Read back from the URL the app routes, so the log, the metrics and validation see
        // the path and query exactly as routed (dot segments resolved, odd bytes escaped).
        context.target = requestTarget(request.url) ?? target;
        attachContext(request, context);
        response =
          oversizedRequest(context.target, request.headers) ?? trailingSlashRedirect(context.target) ?? (await app.handle(request));
      }
      response.headers.set("x-request-id", context.id);
    } catch (err) {
      context.error = err;
      response = detailResponse(500, "INTERNAL_ERROR", { "x-request-id": context.id });
    }
    const done = context.bodyDone ?? Promise.resolve();
    const finish = () => {
      const seconds = (performance.now() - context.startedAt) / 1000;
      try {
        logRequest(logger, request.method, response.status, context, seconds);
        observe?.({ request, response, context, seconds });
      } catch (err) {
        logger.error("request bookkeeping failed", { request_id: context.id, ...errorFields(err) });
      }
    };
    void done.then(finish, finish);
    return response;
  };
}

function logRequest(logger: Logger, method: string, status: number, context: RequestContext, seconds: number): void {
  const path = context.target.path;
  const fields: Record<string, unknown> = {
    request_id: context.id,
    method,
    // A hostile path may be 64 KiB long: one request must not write a 64 KiB log line.
    path: path.length > LOGGED_PATH_MAX ? path.slice(0, LOGGED_PATH_MAX) + "…" : path,
    status,
    duration_ms: Math.round(seconds * 10000) / 10,
  };
  if (context.rows !== undefined) fields.rows = context.rows;
  if (context.keyFingerprint) fields.key = context.keyFingerprint;
  if (context.error !== undefined) Object.assign(fields, errorFields(context.error));
  const level = status >= 500 || (context.error !== undefined && status < 400) ? "error" : "info";
  logger[level]("request", fields);
}
