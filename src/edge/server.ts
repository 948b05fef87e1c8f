// The HTTP edge: the only place that listens, and the fetch handler it runs.
//
// Listening: plain HTTP, or HTTPS when a certificate and key are set: then with TLS_CIPHERS'
// TLS 1.2 suites (Bun 1.4.5's own default accepts RSA key exchange and CBC-SHA1 suites; it
// already refuses TLS 1.1 and older) and Strict-Transport-Security on every answer the handler
// makes (HSTS_MAX_AGE; Bun's bare parser errors have none).
//
// The handler wraps the Elysia app: it reads the request's target once (never trusting the
// Host header), and gives each request its exchange (exchange.ts: its id, X-Request-Id echoed
// when sane, else generated; its deadline; its one log line once its body has been sent,
// streams included). Nothing a request does may stop the process: the app's failures become
// their response here (exchange.failed), and the work after the answer (log line, metrics)
// is guarded so that its failure is logged, never thrown into the event loop.

import { X509Certificate } from "node:crypto";
import { ConfigError, INTERMEDIATE_CIPHERS } from "../settings/config.ts";
import { fileProblem, readOperatorFile } from "../settings/operator-file.ts";
import { BAD_REQUEST, ListenError, NOT_FOUND, classify } from "../failures.ts";
import { copyOf } from "../ops/units.ts";
import { errorFields, type Logger } from "../ops/log.ts";
import { Exchange, SECURITY_HEADERS, bodyBytesOf, bodyWithSize, failureResponse, internalUrl, requestTarget, routedRequest, type RequestObserver } from "../request/exchange.ts";
import { oversizedRequest, trailingSlashRedirect, walkedWithDots, type RawRoute } from "./routes.ts";
import { varyWithOrigin, type Cors } from "./cors.ts";
import { BlockList, isIP } from "node:net";
import { parseTrustedProxies } from "../settings/trusted-proxies.ts";

export interface ListenOptions {
  host: string;
  port: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** TLS 1.2 suites, OpenSSL's syntax (TLS_CIPHERS); unset: Mozilla's intermediate profile (INTERMEDIATE_CIPHERS). */
  tlsCiphers?: string;
  /** Strict-Transport-Security max-age on HTTPS answers (HSTS_MAX_AGE); 0 or unset: none. */
  hstsMaxAge?: number;
}

export function readTls(options: ListenOptions): { cert: string; key: string } | undefined {
  if (!options.tlsCertFile || !options.tlsKeyFile) return undefined;
  const read = (file: string, what: string) => {
    try {
      return readOperatorFile(file).content.toString("utf8");
    } catch (err) {
      throw new ConfigError(`cannot read ${what} ${file}: ${fileProblem(err)}${copyOf(file)}`);
    }
  };
  return { cert: read(options.tlsCertFile, "TLS_CERT_FILE"), key: read(options.tlsKeyFile, "TLS_KEY_FILE") };
}

/** When the served chain's first certificate expires (its earliest notAfter), in seconds since the epoch. */
export function certificateNotAfter(chainPem: string): number {
  const certificates = chainPem.split(/(?<=-----END CERTIFICATE-----)/).filter((part) => part.includes("-----BEGIN CERTIFICATE-----"));
  return Math.min(...certificates.map((pem) => Date.parse(new X509Certificate(pem).validTo) / 1000));
}

/** `rawRoutes`: the patterns Bun's router matches on the raw target, each told to the handler (raw-routes.ts). */
export function listen(options: ListenOptions, handler: FetchHandler, logger: Logger, rawRoutes: readonly string[] = []): Bun.Server<undefined> {
  const tls = readTls(options);
  const hsts = tls && options.hstsMaxAge ? `max-age=${options.hstsMaxAge}` : undefined;
  const handle: FetchHandler = hsts
    ? async (req, server, raw) => {
        const response = await handler(req, server, raw);
        response.headers.set("strict-transport-security", hsts);
        return response;
      }
    : handler;
  // Each pattern's match made once, not per request.
  const routes = Object.fromEntries(
    rawRoutes.map((pattern) => {
      const matched: RawRoute = { pattern };
      return [pattern, (req: Request, server: Bun.Server<undefined>) => handle(req, server, matched)];
    }),
  );
  const unmatched: RawRoute = { pattern: null };
  try {
    return Bun.serve({
      hostname: options.host,
      port: options.port,
      reusePort: false, // a second copy on the same port must fail, not silently share it
      idleTimeout: 60,
      ...(tls ? { tls: { ...tls, ciphers: options.tlsCiphers ?? INTERMEDIATE_CIPHERS } } : {}),
      routes,
      fetch: (req, server) => handle(req, server, unmatched),
      // Last resort if something escapes the handler's own error mapping: still JSON, never a
      // stack, and never a 500 without its cause in the log.
      error: (err) => {
        logger.error("request failed outside the handler", errorFields(err));
        return failureResponse(classify(undefined), hsts ? { "strict-transport-security": hsts } : {});
      },
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") throw new ListenError(`port ${options.port} on ${options.host} is already in use`);
    if (code === "EACCES") throw new ListenError(`no permission to listen on ${options.host}:${options.port}`);
    if (code === "EADDRNOTAVAIL") throw new ListenError(`address ${options.host} is not available on this machine`);
    if (code === "ERR_SSL_NO_CIPHER_MATCH") throw new ConfigError(`TLS_CIPHERS names no cipher suite this build knows: ${JSON.stringify(options.tlsCiphers)}`);
    if (tls) throw new ConfigError(`TLS certificate or key rejected: ${(err as Error).message}`);
    // A name that does not resolve (ENOTFOUND), or to an address of another machine (ENOTSUP).
    throw new ListenError(`cannot listen on ${options.host}:${options.port} (${code ?? (err as Error).message}): HOST must be an address or name of this machine (0.0.0.0: every interface)`);
  }
}

/** What the handler hands a routed request to: the Elysia app (src/service/app.ts). */
export interface RoutedApp {
  handle(request: Request): Promise<Response>;
}

/** The part of Bun's server a handler uses: the TCP peer of a request. */
export interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

/** `raw`: what Bun's router matched the raw target with (none in process, where no router ran). */
export type FetchHandler = (request: Request, server?: PeerSource, raw?: RawRoute) => Promise<Response>;

export interface HandlerOptions {
  /** Records each finished request (metrics). */
  observe?: RequestObserver;
  /** Set on every answer (the demo's X-Demo-Data). */
  headers?: Record<string, string>;
  /** REQUEST_TIMEOUT_MS: from arrival to the last byte of the body (0: no limit). */
  requestTimeoutMs?: number;
  /** The client address a log line shows (TRUSTED_PROXIES); default: the peer. */
  clientAddress?: ClientAddress;
  /** Why the server is closing connections itself right now (exchange.ts), if it is. */
  serverCut?: () => Error | undefined;
  /** The patterns the server registers with Bun's router (raw-routes.ts). */
  rawRoutes?: readonly string[];
  /** The paths this listener serves (MONITORING_PORT splits them in two); the others answer 404 as unknown paths. Default: all. */
  serves?: (path: string) => boolean;
  /** Cross-origin reads (CORS_ALLOWED_ORIGINS, cors.ts): the API's listener only; none when off. */
  cors?: Cors;
  /** Whether a peer is one of TRUSTED_PROXIES (their X-Forwarded-* headers are believed); default: none is. */
  trustedProxy?: (address: string) => boolean;
}

export function createHandler(app: RoutedApp, logger: Logger, options: HandlerOptions = {}): FetchHandler {
  const { observe, headers, requestTimeoutMs = 0, serverCut, serves = () => true, cors, trustedProxy: trusted = () => false } = options;
  const addressOf = options.clientAddress ?? clientAddress(undefined);
  const rawRoutes = options.rawRoutes ?? [];
  return async (arrived, server, raw) => {
    const exchange = new Exchange(arrived, { logger, observe, requestTimeoutMs, serverCut });
    let peer: string | undefined;
    try {
      peer = server?.requestIP(arrived)?.address;
      exchange.client = addressOf(peer, arrived.headers.get("x-forwarded-for"));
    } catch {
      // A peer that is already gone has no address: the line goes without one.
    }
    exchange.fromTrustedProxy = peer !== undefined && trusted(peer);
    let request = arrived;
    let response: Response;
    try {
      const target = requestTarget(arrived.url);
      if (target === null) {
        // CONNECT's authority form (host:443): no path to serve. uvicorn answers 400 too.
        response = exchange.failed(BAD_REQUEST());
      } else {
        request = routedRequest(internalUrl(target), arrived, exchange);
        // Read back from the URL the app routes, so the log, the metrics and validation see
        // the path and query exactly as routed (dot segments resolved, odd bytes escaped).
        exchange.target = requestTarget(request.url) ?? target;
        exchange.walked = walkedWithDots(arrived.url, target.path, exchange.target.path, raw, rawRoutes);
        const refused = exchange.walked || !serves(exchange.target.path) ? NOT_FOUND() : oversizedRequest(exchange.target, request.headers);
        response = refused
          ? exchange.failed(refused)
          : (trailingSlashRedirect(exchange.target) ?? cors?.preflight(request, exchange.target.path) ?? (await app.handle(request)));
      }
      // An error body Elysia rebuilt from ours is no longer one whose size we know: it is a
      // few bytes, read here so that its log line says how many went out.
      if (response.status >= 400 && response.body && bodyBytesOf(response) === undefined) {
        response = bodyWithSize(new Uint8Array(await response.arrayBuffer()), response);
      }
      for (const [name, value] of Object.entries(exchange.responseHeaders())) response.headers.set(name, value);
      // Every answer says these, routes served by a library (/openapi.json, /docs) included;
      // one that set its own Cache-Control (the endpoint's 200 and 304) keeps it.
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) if (!response.headers.has(name)) response.headers.set(name, value);
      for (const [name, value] of Object.entries(headers ?? {})) response.headers.set(name, value);
    } catch (err) {
      response = exchange.failed(err, { ...exchange.responseHeaders(), ...headers });
    }
    // Errors too: a page reads a 401 or a 422 only when its answer names its origin.
    if (cors) corsHeaders(cors, request, exchange.target.path, response);
    if (arrived.method === "HEAD") completeHeadAnswer(response);
    exchange.sent(request, response);
    return response;
  };
}

/** A listed origin's Access-Control-* headers, and Origin in Vary on every answer (a cache must not mix origins). */
function corsHeaders(cors: Cors, request: Request, path: string, response: Response): void {
  for (const [name, value] of Object.entries(cors.headers(request, path))) response.headers.set(name, value);
  response.headers.set("vary", varyWithOrigin(response.headers.get("vary")));
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

// The client address a request log line shows: the TCP peer, or, when the peer is one of
// the operator's trusted reverse proxies (TRUSTED_PROXIES), the address those proxies report
// in X-Forwarded-For. The header is read from the right (the entry the nearest proxy added)
// and trusted proxies are skipped; the first address that is not one is the client. A
// client can write anything into the header, so nothing left of an untrusted entry counts.

/** "::ffff:10.0.0.1" as the IPv4 address it is. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export type ClientAddress = (peer: string | undefined, forwardedFor: string | null) => string | undefined;

/** Whether an address is one of TRUSTED_PROXIES (none trusted when unset). */
export function trustedProxy(trustedProxies: string | undefined): (address: string) => boolean {
  const { entries } = parseTrustedProxies(trustedProxies ?? "");
  if (entries.length === 0) return () => false;
  const list = new BlockList();
  for (const e of entries) {
    if (e.prefix === undefined) list.addAddress(e.address, e.family);
    else list.addSubnet(e.address, e.prefix, e.family);
  }
  return (address) => {
    const version = isIP(address);
    return version !== 0 && list.check(address, version === 4 ? "ipv4" : "ipv6");
  };
}

export function clientAddress(trustedProxies: string | undefined): ClientAddress {
  if (parseTrustedProxies(trustedProxies ?? "").entries.length === 0) return (peer) => (peer === undefined ? undefined : plain(peer));
  const trusted = trustedProxy(trustedProxies);
  return (peer, forwardedFor) => {
    if (peer === undefined) return undefined;
    let client = plain(peer);
    if (!trusted(peer) || !forwardedFor) return client;
    const hops = forwardedFor.split(",").map((s) => s.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain(hops[i]!);
      // Not an address: whoever wrote it is not to be believed; the last trusted hop is what we know.
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!trusted(hop)) return client;
    }
    return client;
  };
}
