// Builds every response the service sends, so that each one carries the same headers:
// application/json with no charset (as Starlette sends it), no caching, no sniffing.

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
