// The only place that listens. Plain HTTP, or HTTPS when a certificate and key are set.

import { readFileSync } from "node:fs";
import { ConfigError } from "../config.ts";
import { ListenError } from "../failures.ts";
import { errorFields, type Logger } from "../log.ts";
import { detailResponse } from "./responses.ts";
import type { FetchHandler } from "./handler.ts";

export interface ListenOptions {
  host: string;
  port: number;
  tlsCertFile?: string;
  tlsKeyFile?: string;
}

export function readTls(options: ListenOptions): { cert: string; key: string } | undefined {
  if (!options.tlsCertFile || !options.tlsKeyFile) return undefined;
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file, "utf8");
    } catch (err) {
      throw new ConfigError(`cannot read ${what} ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  };
  return { cert: read(options.tlsCertFile, "TLS_CERT_FILE"), key: read(options.tlsKeyFile, "TLS_KEY_FILE") };
}

/** `rawRoutes`: the patterns Bun's router matches on the raw target, each told to the handler (raw-routes.ts). */
export function listen(options: ListenOptions, handler: FetchHandler, logger: Logger, rawRoutes: readonly string[] = []): Bun.Server<undefined> {
  const tls = readTls(options);
  const routes = Object.fromEntries(rawRoutes.map((pattern) => [pattern, (req: Request, server: Bun.Server<undefined>) => handler(req, server, { pattern })]));
  try {
    return Bun.serve({
      hostname: options.host,
      port: options.port,
      reusePort: false, // a second copy on the same port must fail, not silently share it
      idleTimeout: 60,
      ...(tls ? { tls } : {}),
      routes,
      fetch: (req, server) => handler(req, server, { pattern: null }),
      // Last resort if something escapes the handler's own error mapping: still JSON, never a
      // stack, and never a 500 without its cause in the log.
      error: (err) => {
        logger.error("request failed outside the handler", errorFields(err));
        return detailResponse(500, "INTERNAL_ERROR");
      },
    });
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === "EADDRINUSE") throw new ListenError(`port ${options.port} on ${options.host} is already in use`);
    if (code === "EACCES") throw new ListenError(`no permission to listen on ${options.host}:${options.port}`);
    if (code === "EADDRNOTAVAIL") throw new ListenError(`address ${options.host} is not available on this machine`);
    if (tls) throw new ConfigError(`TLS certificate or key rejected: ${(err as Error).message}`);
    // A name that does not resolve (ENOTFOUND), or to an address of another machine (ENOTSUP).
    throw new ListenError(`cannot listen on ${options.host}:${options.port} (${code ?? (err as Error).message}): HOST must be an address or name of this machine (0.0.0.0: every interface)`);
  }
}
