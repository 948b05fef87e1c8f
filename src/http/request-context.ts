// What the service learns about one request while answering it, for its log line and
// metrics: its id, its target (path and query, read once from the URL), which key was used
// (by label or fingerprint), how many rows went out, and whether the body is streamed (its end is
// then watched by the handler).

import type { KeyMatch } from "../auth/api-keys.ts";
import { requestTarget, type RequestTarget } from "./request-target.ts";

export interface RequestContext {
  id: string;
  startedAt: number;
  /** The path and query the app routes and validates (never the Host header). */
  target: RequestTarget;
  /** The key used: its fingerprint, and its label from the key file if it has one. */
  key?: KeyMatch;
  /** Who sent it: the peer, or the client a trusted proxy names (client-address.ts). */
  client?: string;
  userAgent?: string;
  /** From the checked request to the database's first rows (including the wait for a connection). */
  firstRowsMs?: number;
  /** The format rows are written in, for a 200 of the endpoint. */
  format?: "json" | "csv";
  rows?: number;
  /** The cause of a 5xx, for the log (never for the body). */
  error?: unknown;
  /** Set by routes that stream their body: the handler then watches how the body ends. */
  streamed?: boolean;
}

const contexts = new WeakMap<Request, RequestContext>();

export function attachContext(request: Request, context: RequestContext): void {
  contexts.set(request, context);
}

/** The request's context; a fresh one when the app is called without the server wrapper (tests). */
export function contextOf(request: Request): RequestContext {
  let context = contexts.get(request);
  if (!context) {
    const target = requestTarget(request.url) ?? { path: "/", query: undefined };
    context = { id: crypto.randomUUID(), startedAt: performance.now(), target };
    contexts.set(request, context);
  }
  return context;
}
