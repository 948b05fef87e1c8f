// One request and its answer, from arrival to the request's log line: the one owner of what
// must outlive Elysia's handling of it (its log line and metrics are written when its body
// ends, after Elysia is done). It goes through these states, and the body's end is the only
// way out of the last:
//
//   answering  the request is routed and checked, and its answer made (app.ts): its id, the
//              target read once from the URL, its one deadline (`signal`), and what the
//              answer learns on the way (the key, the question, the rows' source and count);
//   sending    the response is the server's: a body sent by body.ts goes out at the
//              client's pace, a body built whole at once;
//   closed     the body has ended (complete, the client gone, or failed): the deadline is
//              stopped, the failure classified once, the line logged and the metrics fed, once.
//
// A failure becomes its response in one place (`failed`), for the handler and Elysia's
// error hook alike: failures.ts says what it means.

import type { KeyMatch } from "../key/api-keys.ts";
import { classify, ClientClosedRequestError, RequestDeadlineError, type Failure } from "../failures.ts";
import { errorFields, type Logger } from "../ops/log.ts";
import type { AnswerKey } from "../query/answer-key.ts";
import { requestTarget, type RequestTarget } from "./request-target.ts";
import { bodyBytesOf, failureResponse } from "./responses.ts";

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
  exchange: { target: { path: string }; walked?: boolean; key?: { label?: string }; format?: "json" | "csv" | "csv-excel"; rows?: number };
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
  /** The key used: its fingerprint, and its label from the key file if it has one. */
  key?: KeyMatch;
  /** The question of a checked request to the endpoint: its range, segment and format. */
  answer?: AnswerKey;
  /** From the checked request to the database's first rows (including the wait for a connection). */
  firstRowsMs?: number;
  /** "daily": the rows came from the daily rows directly (src/reads/read-source.ts), not the rollup. */
  source?: "daily";
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
    arrived: Request,
    private readonly options: ExchangeOptions,
  ) {
    const incoming = arrived.headers.get("x-request-id");
    this.id = incoming && SAFE_REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
    this.userAgent = arrived.headers.get("user-agent") ?? undefined;
    this.deadline = requestDeadline(arrived.signal, options.requestTimeoutMs ?? 0, options.serverCut);
    this.signal = this.deadline.signal;
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
    if (failure.status >= 499) this.error = err;
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
    if (this.firstRowsMs !== undefined) fields.first_rows_ms = Math.round(this.firstRowsMs * 10) / 10;
    if (this.source) fields.source = this.source;
    // Read a second time before its first byte (product-costs-answer.ts): why the first read stopped.
    if (this.retriedAfter !== undefined) fields.retried_after = errorCode(this.retriedAfter);
    if (this.client !== undefined) fields.client = this.client;
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
 * The request the app routes (server.ts): the URL repaired, carrying its exchange, which
 * Elysia's handlers get through `derive` (app.ts) and the error hook from the request.
 */
export class ServiceRequest extends Request {
  constructor(
    url: string,
    arrived: Request,
    readonly exchange: Exchange,
  ) {
    super(url, arrived);
  }
}

/** The request's exchange: its own, or a new one for a request that did not come through the handler (logged nowhere). */
export function exchangeOf(request: Request): Exchange {
  if (request instanceof ServiceRequest) return request.exchange;
  const exchange = new Exchange(request, { logger: SILENT });
  exchange.target = requestTarget(request.url) ?? exchange.target;
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

/** An error's code (a SQLSTATE, a driver's code), else its message. */
function errorCode(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.message : String(err);
}
