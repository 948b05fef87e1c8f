// The service's request handler, in process, over a real database pool.

import { buildKeyRing, type ApiKeyRing } from "../../src/auth/api-keys.ts";
import type { Sql } from "../../src/db/client.ts";
import { checkReadiness } from "../../src/db/readiness.ts";
import { readRollupLag } from "../../src/db/rollup-lag.ts";
import type { Admission } from "../../src/http/admission.ts";
import type { AnswerCache } from "../../src/http/answer-cache.ts";
import type { BufferBudget } from "../../src/http/read-ahead.ts";
import { createApp } from "../../src/http/app.ts";
import { clientAddress } from "../../src/http/client-address.ts";
import { createHandler, type FetchHandler } from "../../src/http/handler.ts";
import type { RateLimiter } from "../../src/http/rate-limit.ts";
import type { ServiceMetrics } from "../../src/metrics/service-metrics.ts";
import { memoryLogger } from "./memory-logger.ts";

export const KEY = "test-key-0123456789abcdef";
export const OTHER_KEY = "second-key-fedcba9876543210";

export interface TestApp {
  handle: FetchHandler;
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
  /** The answer cache (ANSWER_CACHE_MB); none by default. */
  answerCache?: AnswerCache;
  /** The build the ETags name. */
  build?: { version: string; commit: string };
}

export function testApp(sql: Sql, options: TestAppOptions = {}): TestApp {
  let keys = options.keys ?? ring(KEY);
  const logger = memoryLogger();
  const app = createApp({
    keys: () => keys,
    sql,
    logger,
    maxRangeDays: options.maxRangeDays ?? 0,
    firstBatchTimeoutMs: options.firstBatchTimeoutMs ?? 30000,
    readiness: () => checkReadiness(sql, 2000),
    rollupLag: () => readRollupLag(sql, 2000),
    batchSize: options.batchSize,
    connectTimeoutMs: options.connectTimeoutMs,
    admission: options.admission,
    rateLimiter: options.rateLimiter,
    metrics: options.metrics,
    readAhead: options.readAhead,
    docsEnabled: options.docsEnabled,
    answerCache: options.answerCache,
    build: options.build,
  });
  const handle = createHandler(app, logger, {
    observe: options.metrics?.observer(app.routes),
    requestTimeoutMs: options.requestTimeoutMs,
    clientAddress: clientAddress(options.trustedProxies),
  });
  return {
    handle,
    logs: logger.lines,
    setKeys: (k) => (keys = k),
    get: (path, headers = { authorization: `Bearer ${KEY}` }) =>
      handle(new Request(`http://localhost${path}`, { headers })),
  };
}
