// Builds every response the service sends, so that each one carries the same headers:
// application/json with no charset (as Starlette sends it), no caching, no sniffing.

export const JSON_TYPE = "application/json";

/** On every answer, bodies or not: nothing is cached, nothing is sniffed. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
};

export const BASE_HEADERS: Readonly<Record<string, string>> = { "content-type": JSON_TYPE, ...SECURITY_HEADERS };

/** Compact JSON as FastAPI writes it: no spaces, non-ASCII left as UTF-8. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value);
}

const bodyBytes = new WeakMap<Response, number>();

export function jsonResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  const response = new Response(body, { status, headers: { ...BASE_HEADERS, ...headers } });
  bodyBytes.set(response, Buffer.byteLength(body));
  return response;
}

/** `bytes` as the body of a response with `like`'s status and headers, its size known to bodyBytesOf. */
export function bodyWithSize(bytes: Uint8Array, like: Response): Response {
  const response = new Response(bytes, { status: like.status, headers: like.headers });
  bodyBytes.set(response, bytes.byteLength);
  return response;
}

/** The size of a body built here (for the request log), undefined for any other response. */
export function bodyBytesOf(response: Response): number | undefined {
  return bodyBytes.get(response);
}

export function detailResponse(status: number, detail: unknown, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, compactJson({ detail }), headers);
}
