// Where a client reached this service, as the API document's `servers` names it, so that a
// generator given https://costs.example.com/openapi.json calls that same service: the scheme
// (https on the TLS listener), the Host header's authority; behind one of TRUSTED_PROXIES,
// what it forwards instead (X-Forwarded-Proto, X-Forwarded-Host, X-Forwarded-Prefix for a
// sub-path). A Host that is not an authority gives none: the document then says "/".

const AUTHORITY = /^([a-z0-9.-]+|\[[0-9a-f:.]+\])(:\d{1,5})?$/i;
const PREFIX = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@%-]+)+\/?$/;

/** The first value of a header that a proxy may have listed several times. */
const first = (headers: Headers, name: string) => headers.get(name)?.split(",")[0]!.trim() || undefined;

/** `scheme://authority[/prefix]` of the request as its client sent it, or undefined when the authority is not one. */
export function publicBase(headers: Headers, tls: boolean, fromTrustedProxy: boolean): string | undefined {
  const proto = fromTrustedProxy ? first(headers, "x-forwarded-proto")?.toLowerCase() : undefined;
  const scheme = proto === "https" || proto === "http" ? proto : tls ? "https" : "http";
  const host = (fromTrustedProxy ? first(headers, "x-forwarded-host") : undefined) ?? headers.get("host") ?? "";
  if (!AUTHORITY.test(host)) return undefined;
  const prefix = fromTrustedProxy ? first(headers, "x-forwarded-prefix") : undefined;
  return `${scheme}://${host.toLowerCase()}${prefix !== undefined && PREFIX.test(prefix) ? prefix.replace(/\/$/, "") : ""}`;
}
