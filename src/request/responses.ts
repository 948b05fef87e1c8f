// Makes every response the service sends but a 200's streamed body (src/body/body.ts) and
// the pages of the libraries it serves (/docs, /openapi.json, /metrics' text), so that each one
// carries the same headers: application/json with no charset (as Starlette sends it), no
// caching, no sniffing. A failure is answered through `failureResponse` alone, with what
// failures.ts says it means: the handler's refusals (400, 404, 414, 431), Elysia's (404, 405,
// 422), the endpoint's (401, 400, 412, 429, 503) and the last resort's 500 alike.

import type { Failure } from "../failures.ts";

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

/** 304 Not Modified: no body, the validators of the representation the client holds. */
export function notModified(headers: Record<string, string>): Response {
  return new Response(null, { status: 304, headers: { ...SECURITY_HEADERS, ...headers } });
}

/** 307 Temporary Redirect to `location` (relative: never built from the Host header), no body. */
export function temporaryRedirect(location: string): Response {
  return new Response(null, { status: 307, headers: { ...SECURITY_HEADERS, location } });
}
