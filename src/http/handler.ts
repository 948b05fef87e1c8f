// Wraps the Elysia app into the fetch handler the server runs: reads the request's target
// once (never trusting the Host header), and gives each request its exchange (exchange.ts:
// its id, X-Request-Id echoed when sane, else generated; its deadline; its one log line once
// its body has been sent, streams included).
//
// Nothing a request does may stop the process: the app's failures become a 500 here, and
// the work after the answer (log line, metrics) is guarded so that its failure is logged,
// never thrown into the event loop.

import { clientAddress, type ClientAddress } from "./client-address.ts";
import type { Logger } from "../output/log.ts";
import type { App } from "./app.ts";
import { trailingSlashRedirect } from "./routes.ts";
import { Exchange, ServiceRequest, type RequestObserver } from "./exchange.ts";
import { oversizedRequest } from "./request-guard.ts";
import { walkedWithDots, type RawRoute } from "./raw-routes.ts";
import { internalUrl, requestTarget } from "./request-target.ts";
import { bodyBytesOf, bodyWithSize, detailResponse, SECURITY_HEADERS } from "./responses.ts";

export type { RequestObserver } from "./exchange.ts";

/** The part of Bun's server a handler uses: the TCP peer of a request. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** `raw`: what Bun's router matched the raw target with (none in process, where no router ran). */
export type FetchHandler = (request: Request, server?: PeerSource, raw?: RawRoute) => Promise<Response>;

export interface HandlerOptions {
  /** Records each finished request (metrics). */
  observe?: RequestObserver;
  /** Set on every answer (the demo's X-Demo-Data). */
  headers?: Record<string, string>;
  /** REQUEST_TIMEOUT_MS: from arrival to the last byte of the body (0: no limit). */
  requestTimeoutMs?: number;
  /** The client address a log line shows (TRUSTED_PROXIES); default: the peer. */
  clientAddress?: ClientAddress;
  /** Why the server is closing connections itself right now (exchange.ts), if it is. */
  serverCut?: () => Error | undefined;
  /** The patterns the server registers with Bun's router (raw-routes.ts). */
  rawRoutes?: readonly string[];
  /** The paths this listener serves (MONITORING_PORT splits them in two); the others answer 404 as unknown paths. Default: all. */
  serves?: (path: string) => boolean;
}

export function createHandler(app: App, logger: Logger, options: HandlerOptions = {}): FetchHandler {
  const { observe, headers, requestTimeoutMs = 0, serverCut, serves = () => true } = options;
  const addressOf = options.clientAddress ?? clientAddress(undefined);
  const rawRoutes = options.rawRoutes ?? [];
  return async (arrived, server, raw) => {
    const exchange = new Exchange(arrived, { logger, observe, requestTimeoutMs, serverCut });
    try {
      exchange.client = addressOf(server?.requestIP(arrived)?.address, arrived.headers.get("x-forwarded-for"));
    } catch {
      // A peer that is already gone has no address: the line goes without one.
    }
    let request = arrived;
    let response: Response;
    try {
      const target = requestTarget(arrived.url);
      if (target === null) {
        // CONNECT's authority form (host:443): no path to serve. uvicorn answers 400 too.
        response = detailResponse(400, "Bad Request");
      } else {
        request = new ServiceRequest(internalUrl(target), arrived, exchange);
        // Read back from the URL the app routes, so the log, the metrics and validation see
        // the path and query exactly as routed (dot segments resolved, odd bytes escaped).
        exchange.target = requestTarget(request.url) ?? target;
        exchange.walked = walkedWithDots(arrived.url, target.path, exchange.target.path, raw, rawRoutes);
        response = exchange.walked || !serves(exchange.target.path)
          ? detailResponse(404, "Not Found")
          : (oversizedRequest(exchange.target, request.headers) ?? trailingSlashRedirect(exchange.target) ?? (await app.handle(request)));
      }
      // An error body Elysia rebuilt from ours is no longer one whose size we know: it is a
      // few bytes, read here so that its log line says how many went out.
      if (response.status >= 400 && response.body && bodyBytesOf(response) === undefined) {
        response = bodyWithSize(new Uint8Array(await response.arrayBuffer()), response);
      }
      response.headers.set("x-request-id", exchange.id);
      // Every answer says these, routes served by a library (/openapi.json, /docs) included;
      // one that set its own Cache-Control (the endpoint's 200 and 304) keeps it.
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!response.headers.has(name)) response.headers.set(name, value);
      for (const [name, value] of Object.entries(headers ?? {})) response.headers.set(name, value);
    } catch (err) {
      response = exchange.failed(err, { "x-request-id": exchange.id, ...headers });
    }
    if (arrived.method === "HEAD") completeHeadAnswer(response);
    exchange.sent(request, response);
    return response;
  };
}

/**
 * What a HEAD answer lacks next to its GET's, on the wire. Bun 1.4.5 writes its Date header
 * on GET answers only (RFC 9110 §6.6.1 wants one on every answer of a server with a clock):
 * set here, once, when the answer has none (Bun adds none to an answer that has one). And
 * Elysia answers HEAD with the Content-Length of the body its GET handler returned, 0 for a
 * 304, where §8.6 allows only the 200's length: a 304 goes without one, as its GET does.
 */
function completeHeadAnswer(response: Response): void {
  if (!response.headers.has("date")) response.headers.set("date", new Date().toUTCString());
  if (response.status === 304) response.headers.delete("content-length");
}
