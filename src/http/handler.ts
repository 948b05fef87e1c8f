// Wraps the Elysia app into the fetch handler the server runs: reads the request's target
// once (never trusting the Host header), gives each request its id (X-Request-Id echoed
// when sane, else generated), and writes one log line per request once its body has been
// sent (streams included), with the bytes sent and how the body ended.
//
// Nothing a request does may stop the process: the app's failures become a 500 here, and
// the work after the answer (log line, metrics) is guarded so that its failure is logged,
// never thrown into the event loop.

import { clientAddress, type ClientAddress } from "./client-address.ts";
import { errorFields, type Logger } from "../output/log.ts";
import type { App } from "./app.ts";
import { trailingSlashRedirect } from "./routes.ts";
import { classify, ClientClosedRequestError, RequestDeadlineError, type Failure } from "../failures.ts";
import type { RequestObservation } from "../metrics/service-metrics.ts";
import type { BodyEnd, BodyOutcome } from "./body.ts";
import { ServiceRequest, type RequestContext } from "./request-context.ts";
import { oversizedRequest } from "./request-guard.ts";
import { walkedWithDots, type RawRoute } from "./raw-routes.ts";
import { internalUrl, requestTarget } from "./request-target.ts";
import { bodyBytesOf, bodyWithSize, detailResponse, SECURITY_HEADERS } from "./responses.ts";

// An incoming request id is echoed only if it is short and plain, so logs cannot be forged.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LOGGED_PATH_MAX = 256;

/** The part of Bun's server a handler uses: the TCP peer of a request. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** `raw`: what Bun's router matched the raw target with (none in process, where no router ran). */
export type FetchHandler = (request: Request, server?: PeerSource, raw?: RawRoute) => Promise<Response>;

/** Health, readiness and metrics polls: logged at debug when they succeed, or they would drown the log. */
const POLLS = new Set(["/healthz", "/readyz", "/metrics"]);
const LOGGED_USER_AGENT_MAX = 256;

/** Called once per request when its body is done, with what the log line shows. */
export type RequestObserver = (o: RequestObservation) => void;

export interface HandlerOptions {
  /** Records each finished request (metrics). */
  observe?: RequestObserver;
  /** Set on every answer (the demo's X-Demo-Data). */
  headers?: Record<string, string>;
  /** REQUEST_TIMEOUT_MS: from arrival to the last byte of the body (0: no limit). */
  requestTimeoutMs?: number;
  /** The client address a log line shows (TRUSTED_PROXIES); default: the peer. */
  clientAddress?: ClientAddress;
  /**
   * Why the server is closing connections itself right now (the shutdown timeout), if it is:
   * a request Bun aborts then was cut by the service, and is logged with this cause, not as a
   * client that went away (Bun's abort looks the same either way).
   */
  serverCut?: () => Error | undefined;
  /** The patterns the server registers with Bun's router (raw-routes.ts). */
  rawRoutes?: readonly string[];
}

export function createHandler(app: App, logger: Logger, options: HandlerOptions = {}): FetchHandler {
  const { observe, headers, requestTimeoutMs = 0 } = options;
  const addressOf = options.clientAddress ?? clientAddress(undefined);
  const rawRoutes = options.rawRoutes ?? [];
  return async (arrived, server, raw) => {
    const incoming = arrived.headers.get("x-request-id");
    const deadline = requestDeadline(arrived.signal, requestTimeoutMs, options.serverCut);
    const context: RequestContext = {
      id: incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID(),
      startedAt: performance.now(),
      target: { path: "/", query: undefined },
      signal: deadline.signal,
      userAgent: arrived.headers.get("user-agent") ?? undefined,
    };
    try {
      context.client = addressOf(server?.requestIP(arrived)?.address, arrived.headers.get("x-forwarded-for"));
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
        request = new ServiceRequest(internalUrl(target), arrived, context);
        // Read back from the URL the app routes, so the log, the metrics and validation see
        // the path and query exactly as routed (dot segments resolved, odd bytes escaped).
        context.target = requestTarget(request.url) ?? target;
        context.walked = walkedWithDots(arrived.url, target.path, context.target.path, raw, rawRoutes);
        response = context.walked
          ? detailResponse(404, "Not Found")
          : (oversizedRequest(context.target, request.headers) ?? trailingSlashRedirect(context.target) ?? (await app.handle(request)));
      }
      // An error body Elysia rebuilt from ours is no longer one whose size we know: it is a
      // few bytes, read here so that its log line says how many went out.
      if (!context.body && response.status >= 400 && response.body && bodyBytesOf(response) === undefined) {
        response = bodyWithSize(new Uint8Array(await response.arrayBuffer()), response);
      }
      response.headers.set("x-request-id", context.id);
      // Every answer says these, routes served by a library (/openapi.json, /docs) included;
      // one that set its own Cache-Control (the endpoint's 200 and 304) keeps it.
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!response.headers.has(name)) response.headers.set(name, value);
      for (const [name, value] of Object.entries(headers ?? {})) response.headers.set(name, value);
    } catch (err) {
      context.error = err;
      context.body = undefined;
      const failure = classify(err);
      response = detailResponse(failure.status, failure.detail, { ...failure.headers, "x-request-id": context.id, ...headers });
    }
    if (arrived.method === "HEAD") completeHeadAnswer(response);
    const ended = context.body ?? Promise.resolve<BodyOutcome>({ end: "complete", bytes: request.method === "HEAD" ? 0 : bodyBytesOf(response) });
    const sent = response.status;
    void ended.then((outcome) => {
      deadline.finish();
      const seconds = (performance.now() - context.startedAt) / 1000;
      if (outcome.error !== undefined) context.error = outcome.error;
      try {
        // The one place a request finishes: its failure, if any, classified once for the
        // status logged, the log line and the metrics.
        const failure = context.error === undefined ? undefined : classify(context.error);
        const status = loggedStatus(sent, outcome.end, failure);
        logRequest(logger, request.method, status, sent, outcome, context, seconds, failure);
        observe?.({ request, status, end: outcome.end, context, seconds, failure });
      } catch (err) {
        logger.error("request bookkeeping failed", { request_id: context.id, ...errorFields(err) });
      }
    });
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

/**
 * The request's one deadline: its signal aborts when the client goes away
 * (ClientClosedRequestError; or the server's own cut, `serverCut`, when Bun closed the
 * connection because the service is stopping) or `ms` after arrival (RequestDeadlineError),
 * whichever comes first; 0: no deadline. `finish` (the body done) stops the clock and lets go of the client's
 * signal: a timer left running kept each finished request's objects alive for the whole of
 * REQUEST_TIMEOUT_MS, and with AbortSignal.timeout and AbortSignal.any they were never let go
 * (RSS grew by 1.4 KB a request, /healthz included, without end).
 */
function requestDeadline(clientGone: AbortSignal, ms: number, serverCut?: () => Error | undefined): { signal: AbortSignal; finish(): void } {
  const controller = new AbortController();
  const onGone = () => controller.abort(serverCut?.() ?? new ClientClosedRequestError());
  const timer = ms > 0 ? setTimeout(() => controller.abort(new RequestDeadlineError(ms)), ms) : undefined;
  if (clientGone.aborted) onGone();
  else clientGone.addEventListener("abort", onGone, { once: true });
  return {
    signal: controller.signal,
    finish() {
      clearTimeout(timer);
      clientGone.removeEventListener("abort", onGone);
    },
  };
}

/**
 * The status a request is logged and counted with: the one sent, unless the body was cut
 * short. Then 499 when the client went away (nginx's "client closed request"), or the status
 * the failure would have answered (503, 500) when the server broke it off: a body that did
 * not reach its end is never logged as a 200.
 */
function loggedStatus(sent: number, end: BodyEnd, failure: Failure | undefined): number {
  if (end === "client_closed") return 499;
  if (end === "failed") return (failure ?? classify(undefined)).status;
  return sent;
}

function logRequest(
  logger: Logger,
  method: string,
  status: number,
  sent: number,
  outcome: BodyOutcome,
  context: RequestContext,
  seconds: number,
  classified: Failure | undefined,
): void {
  const path = context.target.path;
  const fields: Record<string, unknown> = {
    request_id: context.id,
    method,
    // A hostile path may be 64 KiB long: one request must not write a 64 KiB log line.
    path: path.length > LOGGED_PATH_MAX ? path.slice(0, LOGGED_PATH_MAX) + "…" : path,
    status,
    duration_ms: Math.round(seconds * 10000) / 10,
  };
  if (outcome.bytes !== undefined) fields.bytes = outcome.bytes;
  // The path shown is the one dot segments led to; the raw target is not to be had (raw-routes.ts).
  if (context.walked) fields.dot_segments = true;
  if (status !== sent) fields.status_sent = sent;
  if (context.rows !== undefined) fields.rows = context.rows;
  // Logs name a key by its label, else by its fingerprint; never by the key.
  if (context.key) fields.key = context.key.label ?? context.key.fingerprint;
  if (context.firstRowsMs !== undefined) fields.first_rows_ms = Math.round(context.firstRowsMs * 10) / 10;
  if (context.source) fields.source = context.source;
  // Read a second time before its first byte (product-costs-answer.ts): why the first read stopped.
  if (context.retriedAfter !== undefined) fields.retried_after = errorCode(context.retriedAfter);
  if (context.client !== undefined) fields.client = context.client;
  const agent = context.userAgent;
  if (agent) fields.user_agent = agent.length > LOGGED_USER_AGENT_MAX ? agent.slice(0, LOGGED_USER_AGENT_MAX) + "…" : agent;
  // A client that left is no error of ours: no cause to report.
  const failure = status !== 499 ? classified : undefined;
  if (failure) {
    Object.assign(fields, errorFields(context.error));
    if (failure.problem) Object.assign(fields, { problem: failure.problem.code, fix: failure.problem.fix });
  }
  const level = failure?.level ?? (status >= 500 ? "error" : POLLS.has(path) && status < 400 ? "debug" : "info");
  logger[level]("request", fields);
}

/** An error's code (a SQLSTATE, a driver's code), else its message. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
}
