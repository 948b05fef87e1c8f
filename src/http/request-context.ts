// What must outlive Elysia's handling of one request: its log line and metrics are written
// when its body ends, after Elysia is done. Its id, its target (path and query, read once
// from the URL), its signal (the client gone or the deadline), which key was used, how many
// rows went out, and how the body ends.

import type { KeyMatch } from "../auth/api-keys.ts";
import type { BodyOutcome } from "./body.ts";
import type { RowFormat } from "./accept.ts";
import { requestTarget, type RequestTarget } from "./request-target.ts";

export interface RequestContext {
  id: string;
  startedAt: number;
  /** The path and query the app routes and validates (never the Host header). */
  target: RequestTarget;
  /** The raw target walked into this path with dot segments (raw-routes.ts): answered 404, counted as no route. */
  walked?: boolean;
  /** Aborted when the client goes away or REQUEST_TIMEOUT_MS passes (the reason says which): the one deadline. */
  signal: AbortSignal;
  /** The key used: its fingerprint, and its label from the key file if it has one. */
  key?: KeyMatch;
  /** Who sent it: the peer, or the client a trusted proxy names (client-address.ts). */
  client?: string;
  userAgent?: string;
  /** From the checked request to the database's first rows (including the wait for a connection). */
  firstRowsMs?: number;
  /** The format rows are written in, for a 200 of the endpoint. */
  format?: RowFormat;
  /** "daily": the rows came from the daily rows directly (src/db/read-source.ts), not the rollup. */
  source?: "daily";
  /** Why the first read of a 200 stopped before its first byte, when it was read a second time. */
  retriedAfter?: unknown;
  rows?: number;
  /** The cause of a 5xx, for the log (never for the body). */
  error?: unknown;
  /** How a body sent by body.ts ends; absent: a body built whole (responses.ts). */
  body?: Promise<BodyOutcome>;
}

/**
 * The request the app routes (handler.ts): the URL repaired, carrying its context, which
 * Elysia's handlers get through `derive` (app.ts) and the error hook from the request.
 */
export class ServiceRequest extends Request {
  constructor(
    url: string,
    arrived: Request,
    readonly context: RequestContext,
  ) {
    super(url, arrived);
  }
}

/** The request's context: its own, or a new one for a request that did not come through the handler (kept nowhere). */
export function contextOf(request: Request): RequestContext {
  if (request instanceof ServiceRequest) return request.context;
  const target = requestTarget(request.url) ?? { path: "/", query: undefined };
  return { id: crypto.randomUUID(), startedAt: performance.now(), target, signal: request.signal };
}
