// One request and its answer, from arrival to the request's log line: the one owner of what
// must outlive Elysia's handling of it (its log line and metrics are written when its body
// ends, after Elysia is done). It goes through these states, and the body's end is the only
// way out of the last:
//
//   answering  the request is routed and checked, and its answer made (pipeline.ts): its id, the
//              target read once from the URL, its one deadline (`signal`), and what the
//              answer learns on the way (the key, the question, the rows' source and count);
//   sending    the response is the server's: a body sent by body.ts goes out at the
//              client's pace, a body built whole at once;
//   closed     the body has ended (complete, the client gone, or failed): the deadline is
//              stopped, the failure classified once, the line logged and the metrics fed, once.
//
// A failure becomes its response in one place (`failed`), for the handler and Elysia's
// error hook alike: failures.ts says what it means. Every response is made here (below), the
// 200's head included (its body is body.ts's).

import type { KeyMatch } from "../key/api-keys.ts";
import { ClientClosedRequestError, RequestDeadlineError, classify, type Failure } from "../failures.ts";
import { errorFields, type Logger } from "../ops/log.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import { publicBase } from "./public-base.ts";

// An incoming request id is echoed only if it is short and plain, so logs cannot be forged.
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const LOGGED_PATH_MAX = 256;
const LOGGED_USER_AGENT_MAX = 256;
/** Health, readiness and metrics polls: logged at debug when they succeed, or they would drown the log. */
const POLLS = new Set(["/healthz", "/readyz", "/metrics"]);

/** How a 200's body ended (src/body/body.ts sends it); a body built whole is complete at once. */
export type BodyEnd = "complete" | "client_closed" | "failed";

export interface BodyOutcome {
  end: BodyEnd;
  /** Body bytes sent; undefined when not known (a body the service did not build itself). */
  bytes: number | undefined;
  /** Why a body failed, for the log line. */
  error?: unknown;
}

/** A finished request as the metrics count it (src/service/service-metrics.ts). */
export interface RequestObservation {
  request: Request;
  /** As logged: the status sent, or 499 / 5xx for a body cut short (see edge/server.ts). */
  status: number;
  /** How the body ended (body/body.ts). */
  end: "complete" | "client_closed" | "failed";
  exchange: { target: { path: string }; walked?: boolean; key?: { label?: string }; format?: "json" | "csv" | "csv-excel" | "arrow"; rows?: number };
  /** Its failure as failures.ts classified it (once, where the request finished), if it failed. */
  failure?: Pick<Failure, "metric">;
  /** From the request's arrival to the last byte of its body (or the failure). */
  seconds: number;
}

/** Called once per request when its body is done, with what the log line shows. */
export type RequestObserver = (o: RequestObservation) => void;

export interface ExchangeOptions {
  logger: Logger;
  /** Records each finished request (metrics). */
  observe?: RequestObserver;
  /** REQUEST_TIMEOUT_MS: from arrival to the last byte of the body (0: no limit). */
  requestTimeoutMs?: number;
  /**
   * Why the server is closing connections itself right now (the shutdown timeout), if it is:
   * a request Bun aborts then was cut by the service, and is logged with this cause, not as a
   * client that went away (Bun's abort looks the same either way).
   */
  serverCut?: () => Error | undefined;
}

type State = "answering" | "sending" | "closed";

export class Exchange {
  readonly id: string;
  readonly startedAt = performance.now();
  /** The path and query the app routes and validates (never the Host header). */
  target: RequestTarget = { path: "/", query: undefined };
  /** The raw target walked into this path with dot segments (raw-routes.ts): answered 404, counted as no route. */
  walked?: boolean;
  /** Aborted when the client goes away or REQUEST_TIMEOUT_MS passes (the reason says which): the one deadline. */
  readonly signal: AbortSignal;
  readonly userAgent: string | undefined;
  /** Who sent it: the peer, or the client a trusted proxy names (client-address.ts). */
  client?: string;
  /** The peer is one of TRUSTED_PROXIES: its X-Forwarded-* headers are believed (publicBase). */
  fromTrustedProxy = false;
  /** The key used: its fingerprint, and its label from the key file if it has one. */
  key?: KeyMatch;
  /** The key's allowance, as its answers say it (RateLimit, RateLimit-Policy), when a rate limit applies. */
  rateLimit?: Record<string, string>;
  /** The question of a checked request to the endpoint: its range, segment and format. */
  answer?: AnswerKey;
  /** From the checked request to the database's first rows (including the wait for a connection). */
  firstRowsMs?: number;
  /**
   * Where a 200's body came from: the answer cache ("kept"), a rendered calendar period, two
   * edges, the range's statement over the rollup, or the daily rows directly
   * (src/reads/read-source.ts).
   */
  source?: "kept" | "rendered" | "edges" | "rollup" | "daily";
  /** The content coding a 200 went out in (null: identity). */
  coding?: "br" | "gzip" | null;
  /** This 200's bytes were kept in the answer cache for the next request. */
  kept?: boolean;
  /** The W3C Trace Context the client sent (traceparent), and this request's span in it (traceresponse). */
  readonly trace: { traceId: string; spanId: string; flags: string } | undefined;
  /** Why the first read of a 200 stopped before its first byte, when it was read a second time. */
  retriedAfter?: unknown;
  rows?: number;
  /** The cause of a 5xx, for the log (never for the body). */
  error?: unknown;
  private state: State = "answering";
  /** How a body sent by body.ts ends; absent: a body built whole (responses.ts). */
  private body: Promise<BodyOutcome> | undefined;
  private readonly deadline: { signal: AbortSignal; finish(): void };

  constructor(
    private readonly arrived: Request,
    private readonly options: ExchangeOptions,
  ) {
    const incoming = arrived.headers.get("x-request-id");
    this.id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    this.userAgent = arrived.headers.get("user-agent") ?? undefined;
    this.trace = traceOf(arrived.headers.get("traceparent"));
    this.deadline = requestDeadline(arrived.signal, options.requestTimeoutMs ?? 0, options.serverCut);
    this.signal = this.deadline.signal;
  }

  /** What every answer to this request says of it: its id, its span when the client sent a traceparent, the key's allowance when a rate limit applies. */
  responseHeaders(): Record<string, string> {
    const t = this.trace;
    return { "x-request-id": this.id, ...(t ? { traceresponse: `00-${t.traceId}-${t.spanId}-${t.flags}` } : {}), ...this.rateLimit };
  }

  /** Where its client reached the service (public-base.ts), for the API document's server: made only when asked. */
  publicBase(): string | undefined {
    return publicBase(this.arrived.headers, this.arrived.url.startsWith("https:"), this.fromTrustedProxy);
  }

  /** The format rows are written in, for a 200 of the endpoint (the question's own: kept once). */
  get format(): AnswerKey["format"] | undefined {
    return this.answer?.format;
  }

  /** The 200's body is body.ts's: its end closes the exchange. */
  streaming(body: Promise<BodyOutcome>): void {
    this.body = body;
  }

  /**
   * The one place a failure becomes a response: failures.ts's status and body, the cause kept
   * for the log line of a 5xx (a 4xx is the client's doing: its line needs no cause). A body
   * begun before it is not this request's answer any more.
   */
  failed(err: unknown, headers: Record<string, string> = {}): Response {
    const failure = classify(err);
    // A 4xx is the client's doing, its line needs no cause; unless the operator has something to do (an expired key).
    if (failure.status >= 499 || failure.level === "warn") this.error = err;
    this.body = undefined;
    return failureResponse(failure, headers);
  }

  /** `response` is the server's now: the exchange closes once its body has ended (at once for a body built whole). */
  sent(request: Request, response: Response): void {
    if (this.state !== "answering") return;
    this.state = "sending";
    const sent = response.status;
    const ended = this.body ?? Promise.resolve<BodyOutcome>({ end: "complete", bytes: request.method === "HEAD" ? 0 : bodyBytesOf(response) });
    void ended.then((outcome) => this.close(request, sent, outcome));
  }

  private close(request: Request, sent: number, outcome: BodyOutcome): void {
    if (this.state === "closed") return;
    this.state = "closed";
    this.deadline.finish();
    const seconds = (performance.now() - this.startedAt) / 1000;
    if (outcome.error !== undefined) this.error = outcome.error;
    const { logger, observe } = this.options;
    try {
      // Its failure, if any, classified once for the status logged, the log line and the metrics.
      const failure = this.error === undefined ? undefined : classify(this.error);
      const status = loggedStatus(sent, outcome.end, failure);
      this.log(logger, request.method, status, sent, outcome, seconds, failure);
      observe?.({ request, status, end: outcome.end, exchange: this, seconds, failure });
    } catch (err) {
      // The work after the answer never throws into the event loop: its failure is logged.
      logger.error("request bookkeeping failed", { request_id: this.id, ...errorFields(err) });
    }
  }

  private log(logger: Logger, method: string, status: number, sent: number, outcome: BodyOutcome, seconds: number, classified: Failure | undefined): void {
    const path = this.target.path;
    const fields: Record<string, unknown> = {
      request_id: this.id,
      method,
      // A hostile path may be 64 KiB long: one request must not write a 64 KiB log line.
      path: path.length > LOGGED_PATH_MAX ? path.slice(0, LOGGED_PATH_MAX) + "…" : path,
      status,
      duration_ms: Math.round(seconds * 10000) / 10,
    };
    if (outcome.bytes !== undefined) fields.bytes = outcome.bytes;
    // The path shown is the one dot segments led to; the raw target is not to be had (raw-routes.ts).
    if (this.walked) fields.dot_segments = true;
    if (status !== sent) fields.status_sent = sent;
    if (this.rows !== undefined) fields.rows = this.rows;
    // Logs name a key by its label, else by its fingerprint; never by the key.
    if (this.key) fields.key = this.key.label ?? this.key.fingerprint;
    // A key refused for its expires= (api-keys.ts): the operator sees which, and since when.
    if (this.key?.expiresAt !== undefined && status === 401) fields.key_expired_at = new Date(this.key.expiresAt).toISOString();
    // What the request asked of the endpoint, once its query was accepted; how its 200 was made.
    const asked = this.answer?.query;
    if (asked) Object.assign(fields, { month_from: asked.monthFrom, month_to: asked.monthTo, segment: asked.segment, format: this.answer!.format });
    if (this.coding !== undefined) fields.encoding = this.coding ?? "identity";
    if (this.firstRowsMs !== undefined) fields.first_rows_ms = Math.round(this.firstRowsMs * 10) / 10;
    if (this.source) fields.source = this.source;
    if (this.kept) fields.kept = true;
    // Read a second time before its first byte (product-costs-answer.ts): why the first read stopped.
    if (this.retriedAfter !== undefined) fields.retried_after = errorCode(this.retriedAfter);
    if (this.client !== undefined) fields.client = this.client;
    if (this.trace) Object.assign(fields, { trace_id: this.trace.traceId, span_id: this.trace.spanId });
    const agent = this.userAgent;
    if (agent) fields.user_agent = agent.length > LOGGED_USER_AGENT_MAX ? agent.slice(0, LOGGED_USER_AGENT_MAX) + "…" : agent;
    // A client that left is no error of ours: no cause to report.
    const failure = status !== 499 ? classified : undefined;
    if (failure) {
      Object.assign(fields, errorFields(this.error));
      if (failure.problem) Object.assign(fields, { problem: failure.problem.code, fix: failure.problem.fix });
    }
    // A readiness poll's 503 is at info: the problem has its own line, once, at error
    // (readiness.ts), where a poll every few seconds would repeat it all day.
    const level = path === "/readyz" && status === 503 ? "info" : (failure?.level ?? (status >= 500 ? "error" : POLLS.has(path) && status < 400 ? "debug" : "info"));
    logger[level]("request", fields);
  }
}

/**
 * Each routed request's exchange, beside it rather than inside it: Elysia hands its handlers the
 * Request alone, so the app's first hook finds the exchange here once (`exchangeOf`) and every
 * stage after it is given it as a value of the context (pipeline.ts). Weak: an exchange lives
 * as long as its request, no longer.
 */
const exchanges = new WeakMap<Request, Exchange>();

/** The request the app routes (edge/server.ts): the URL repaired, and its exchange beside it. */
export function routedRequest(url: string, arrived: Request, exchange: Exchange): Request {
  const request = new Request(url, arrived);
  exchanges.set(request, exchange);
  return request;
}

/** The request's exchange: its own, or a new one for a request that did not come through the handler (logged nowhere). */
export function exchangeOf(request: Request): Exchange {
  const own = exchanges.get(request);
  if (own) return own;
  const exchange = new Exchange(request, { logger: SILENT });
  exchange.target = requestTarget(request.url) ?? exchange.target;
  exchanges.set(request, exchange);
  return exchange;
}

const SILENT: Logger = { debug() {}, info() {}, warn() {}, error() {} };

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

// W3C Trace Context's traceparent (https://www.w3.org/TR/trace-context/ §3.2): version, trace
// id, parent id, flags, in lowercase hex; version ff is invalid, and version 00 has nothing after
// the flags (a later version may: its first four fields are read as 00's).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** The trace a valid traceparent names, with a new span id for this request; undefined for none or an invalid one (ignored, as the spec says). */
function traceOf(header: string | null): Exchange["trace"] {
  const m = header === null ? null : TRACEPARENT.exec(header.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m;
  if (version === "ff" || (version === "00" && rest !== undefined)) return undefined;
  if (/^0+$/.test(traceId!) || /^0+$/.test(parentId!)) return undefined;
  const span = crypto.getRandomValues(new Uint8Array(8));
  return { traceId: traceId!, spanId: Buffer.from(span).toString("hex"), flags: flags! };
}

/** An error's code (a SQLSTATE, a driver's code), else its message. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
}

// The request target (path and query) as the service reads it, derived once when a request
// arrives, with no part played by the Host header.
//
// Bun builds request.url from the Host header and the target. With a Host it can parse, the
// URL is absolute and already normalised (dot segments resolved, raw bytes percent-encoded).
// With an empty, missing or malformed Host (`Host:`, `a:99999`, `a b`, `[::1`, HTTP/1.0
// without Host) it is the bare target ("/healthz"), and for CONNECT the authority
// ("host:443"). `new URL(request.url)` throws on several of these, so nothing here or
// downstream parses the URL Bun built: the path and query are cut out of it by hand, and
// the app routes a copy of the request whose URL has a fixed origin.
//
// A fragment (`#...`) is not part of a request target (RFC 9112 §3.2); Bun passes it on.
// It is dropped, as uvicorn's httptools parser drops it, so `/p#?a=1` is the path /p with
// no query, and `/p?a=1#b` has the query `a=1`.

export interface RequestTarget {
  /** The path, starting with "/", as Bun passed it (percent-escapes kept). */
  path: string;
  /** Everything after the first "?" up to a "#"; undefined when the target has no "?". */
  query: string | undefined;
}

/** The origin of every URL the app sees: routing never depends on what the client sent as Host. */
export const INTERNAL_ORIGIN = "http://localhost";

// scheme "://" authority, as in every absolute URL Bun builds.
const SCHEME_AND_AUTHORITY = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

/** The target of a request whose URL Bun built as `url`; null when it has no path (CONNECT's authority form). */
export function requestTarget(url: string): RequestTarget | null {
  let rest: string;
  if (url.startsWith("/")) {
    rest = url;
  } else {
    const prefix = SCHEME_AND_AUTHORITY.exec(url);
    if (!prefix) return null;
    rest = url.slice(prefix[0].length);
    if (!rest.startsWith("/")) rest = "/" + rest;
  }
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  const mark = rest.indexOf("?");
  if (mark === -1) return { path: rest, query: undefined };
  return { path: rest.slice(0, mark), query: rest.slice(mark + 1) };
}

/**
 * The URL the app routes: the fixed origin, the path and the query (no fragment), normalised
 * by the URL parser (dot segments resolved, bytes outside ASCII percent-encoded). Normalised
 * here because Bun's `new Request(url, request)` keeps the string as given, and a raw U+FFFD
 * (what Bun makes of a byte that is not UTF-8 when the Host is malformed) would then reach
 * a header such as a 307's Location, which refuses it. Behind a fixed origin any path and
 * query parse, so this does not throw.
 */
export function internalUrl(target: RequestTarget): string {
  return new URL(INTERNAL_ORIGIN + target.path + (target.query === undefined ? "" : "?" + target.query)).href;
}

// Every response the service sends is made here, so that each one carries the same headers:
// application/json with no charset (as Starlette sends it), no caching, no sniffing; the 200's
// head (its body is src/body/body.ts's), the 304 and the 307, and the pages of the libraries it
// serves (/docs, /openapi.json, /metrics' text) with their own. A failure is answered through
// `failureResponse` alone, with what failures.ts says it means: the handler's refusals (400,
// 404, 414, 431), Elysia's (404, 405, 422), the endpoint's (401, 400, 412, 429, 503) and the
// last resort's 500 alike.

export const JSON_TYPE = "application/json";

/** On every answer, bodies or not: nothing is cached, nothing is sniffed. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

export const BASE_HEADERS: Readonly<Record<string, string>> = { "content-type": JSON_TYPE, ...SECURITY_HEADERS };

/** A response whose body was built whole here: it knows its size, for the request's log line. */
class SizedResponse extends Response {
  constructor(
    body: string | Uint8Array,
    init: ResponseInit,
    readonly bodyBytes: number,
  ) {
    super(body, init);
  }
}

/** `value` as compact JSON, as FastAPI writes it (JSON.stringify's: no spaces, non-ASCII left as UTF-8). */
export function jsonResponse(status: number, value: unknown, headers: Record<string, string> = {}): Response {
  const body = JSON.stringify(value);
  return new SizedResponse(body, { status, headers: { ...BASE_HEADERS, ...headers } }, Buffer.byteLength(body));
}

/** `bytes` as the body of a response with `like`'s status and headers, its size known to bodyBytesOf. */
export function bodyWithSize(bytes: Uint8Array, like: Response): Response {
  return new SizedResponse(bytes, { status: like.status, headers: like.headers }, bytes.byteLength);
}

/** The size of a body built here (for the request log), undefined for any other response. */
export function bodyBytesOf(response: Response): number | undefined {
  return response instanceof SizedResponse ? response.bodyBytes : undefined;
}

export function detailResponse(status: number, detail: unknown, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, { detail }, headers);
}

/** A failure's answer, as classify() made it: its status, `{"detail": ...}` and its headers, then `headers`. */
export function failureResponse(failure: Failure, headers: Record<string, string> = {}): Response {
  return detailResponse(failure.status, failure.detail, { ...failure.headers, ...headers });
}

/** A 200 whose body src/body/body.ts sends (streamed, or kept bytes), with the headers it made. */
export function okResponse(body: ConstructorParameters<typeof Response>[0], headers: Headers): Response {
  return new Response(body, { status: 200, headers });
}

/** A page of a library the service serves (/docs and its assets, /openapi.json, /metrics' text): its own type and caching, as given. */
export function pageResponse(body: ConstructorParameters<typeof Response>[0], headers: Record<string, string>): Response {
  return new Response(body, { headers });
}

/** 304 Not Modified: no body, the validators of the representation the client holds. */
export function notModified(headers: Record<string, string>): Response {
  return new Response(null, { status: 304, headers: { ...SECURITY_HEADERS, ...headers } });
}

/** 307 Temporary Redirect to `location` (relative: never built from the Host header), no body. */
export function temporaryRedirect(location: string): Response {
  return new Response(null, { status: 307, headers: { ...SECURITY_HEADERS, location } });
}
