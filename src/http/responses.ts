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

export function jsonResponse(status: number, body: string, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { ...BASE_HEADERS, ...headers } });
}

export function detailResponse(status: number, detail: unknown, headers: Record<string, string> = {}): Response {
  return jsonResponse(status, compactJson({ detail }), headers);
}
