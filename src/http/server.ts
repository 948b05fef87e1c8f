// The only place that listens. Plain HTTP, or HTTPS when a certificate and key are set:
// then with TLS_CIPHERS' TLS 1.2 suites (Bun 1.4.5's own default accepts RSA key exchange
// and CBC-SHA1 suites; it already refuses TLS 1.1 and older) and Strict-Transport-Security
// on every answer the handler makes (HSTS_MAX_AGE; Bun's bare parser errors have none).

import { X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { ConfigError, INTERMEDIATE_CIPHERS } from "../settings/config.ts";
import { ListenError } from "../failures.ts";
import { copyOf } from "../systemd/units.ts";
import { errorFields, type Logger } from "../output/log.ts";
import { detailResponse } from "./responses.ts";
import type { FetchHandler } from "./handler.ts";
import type { RawRoute } from "./raw-routes.ts";

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
      return readFileSync(file, "utf8");
    } catch (err) {
      throw new ConfigError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}${copyOf(file)}`);
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
        return detailResponse(500, "INTERNAL_ERROR", hsts ? { "strict-transport-security": hsts } : {});
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
