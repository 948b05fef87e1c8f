// The service's request handler, in process, over a real database pool: assembled by the
// same function `serve` uses (service/service.ts), so the database guard, readiness and the
// demo's header are the executable's; the options tune what tests need to watch.

import { buildKeyRing, type ApiKeyRing } from "../../src/key/api-keys.ts";
import { DEFAULTS } from "../../src/settings/config.ts";
import { createPool, type Sql } from "../../src/database/client.ts";
import type { Admission } from "../../src/answer/answer-reads.ts";
import type { AnswerCache } from "../../src/answer/answer-cache.ts";
import type { FetchHandler } from "../../src/edge/server.ts";
import type { RateLimiter } from "../../src/key/rate-limit.ts";
import type { BufferBudget } from "../../src/body/body.ts";
import { createService, type ServiceSettings } from "../../src/service/service.ts";
import type { ServiceMetrics } from "../../src/service/service-metrics.ts";
import { memoryLogger } from "./memory-logger.ts";

export const KEY = "test-key-0123456789abcdef";
export const OTHER_KEY = "second-key-fedcba9876543210";

export interface TestApp {
  handle: FetchHandler;
  /** The patterns `serve` registers with Bun's router (listen's last argument). */
  rawRoutes: readonly string[];
  logs: Record<string, unknown>[];
  setKeys(keys: ApiKeyRing): void;
  /** GET path with `Authorization: Bearer KEY` unless headers say otherwise. */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
}

export function ring(...keys: string[]): ApiKeyRing {
  return buildKeyRing(keys.map((value, i) => ({ value, source: `test key ${i + 1}` })));
}

export interface TestAppOptions {
  keys?: ApiKeyRing;
  maxRangeDays?: number;
  batchSize?: number;
  firstBatchTimeoutMs?: number;
  connectTimeoutMs?: number;
  admission?: Admission;
  rateLimiter?: RateLimiter;
  /** Serves /metrics and records every request, as in the executable. */
  metrics?: ServiceMetrics;
  /** Reads answers ahead of slow clients into this budget (none: streamed at the client's pace). */
  readAhead?: BufferBudget;
  /** REQUEST_TIMEOUT_MS: the whole-request deadline, from arrival to the body's last byte (0: none). */
  requestTimeoutMs?: number;
  /** DOCS_ENABLED (default on). */
  docsEnabled?: boolean;
  /** Trusted proxies for the logged client address (TRUSTED_PROXIES). */
  trustedProxies?: string;
  /** The origins whose pages may read the API (CORS_ALLOWED_ORIGINS); none by default. */
  corsAllowedOrigins?: string;
  /** The answer cache (ANSWER_CACHE_MB); none by default. */
  answerCache?: AnswerCache;
  /** The build the ETags name. */
  build?: { version: string; commit: string };
  /** The database serves the embedded demo data (every answer then says X-Demo-Data: true). */
  demoData?: boolean;
  /** True once the executable would be shutting down (serve.ts). */
  stopping?: () => boolean;
}

/**
 * For what needs no database (the API document, an unknown path): a pool that connects to
 * nothing until used, and then to a port where nothing listens.
 */
export function noDatabase(): Sql {
  return createPool({ url: "postgres://nobody@127.0.0.1:1/none", max: 1, connectTimeoutMs: 500, statementTimeoutMs: 1000, readOnly: true, applicationName: "pce-no-database" });
}

export function testApp(sql: Sql, options: TestAppOptions = {}): TestApp {
  let keys = options.keys ?? ring(KEY);
  const logger = memoryLogger();
  // The executable's defaults, except what would change what most tests watch: answers
  // stream at the client's pace (no read-ahead), none is cached, and no deadline.
  const settings: ServiceSettings = {
    ...DEFAULTS,
    maxRangeDays: options.maxRangeDays ?? DEFAULTS.maxRangeDays,
    docsEnabled: options.docsEnabled ?? DEFAULTS.docsEnabled,
    requestTimeoutMs: options.requestTimeoutMs ?? 0,
    responseBufferMb: 0,
    answerCacheMb: 0,
    trustedProxies: options.trustedProxies,
    corsAllowedOrigins: options.corsAllowedOrigins,
    ...(options.connectTimeoutMs !== undefined ? { dbConnectTimeoutMs: options.connectTimeoutMs } : {}),
  };
  const { handle, rawRoutes } = createService({
    settings,
    database: { sql, readinessSql: sql, servesDemoData: options.demoData ?? false },
    keys: () => keys,
    logger,
    metrics: options.metrics,
    build: options.build,
    admission: options.admission,
    readAhead: options.readAhead,
    answerCache: options.answerCache,
    rateLimiter: options.rateLimiter,
    firstBatchTimeoutMs: options.firstBatchTimeoutMs,
    batchSize: options.batchSize,
    stopping: options.stopping,
  });
  return {
    handle,
    rawRoutes,
    logs: logger.lines,
    setKeys: (k) => (keys = k),
    get: (path, headers = { authorization: `Bearer ${KEY}` }) =>
      handle(new Request(`http://localhost${path}`, { headers })),
  };
}
