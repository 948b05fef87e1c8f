// The service's request handling, assembled once, here and nowhere else, from its settings and
// its database: the database guard, the read source and readiness; the reads' admission, edge
// store, warmer, answer cache and read-ahead; the endpoint's answer built from them; the app's
// routes, each given only what it uses; the fetch handler around it, and the gauges /metrics
// reads. `serve` listens with it and the in-process tests call it, so what a test sees is what
// the executable runs.

import { EdgeStore } from "../reads/edges/edge-store.ts";
import { createEdgeWarmer } from "../reads/edges/range-read.ts";
import { answerReads, createAdmission, type Admission } from "../answer/answer-reads.ts";
import type { AnswerParts } from "../answer/product-costs-answer.ts";
import { NOT_CONFIGURED } from "../failures.ts";
import { tmpdir } from "node:os";
import type { ApiKeyRing } from "../key/api-keys.ts";
import { ConfigError, type Config } from "../settings/config.ts";
import type { Database } from "../backends/database.ts";
import { createDatabaseGuard } from "../database/database-guard.ts";
import { checkReadiness, readinessLog, type Readiness } from "../reads/readiness.ts";
import { sourceChoice } from "../reads/read-source.ts";
import { readRollupLag } from "../rollup/rollup-lag.ts";
import { createSilenceWatch } from "../database/silence.ts";
import type { Logger } from "../ops/log.ts";
import type { ServiceMetrics } from "./service-metrics.ts";
import { createAnswerCache, type AnswerCache } from "../answer/answer-cache.ts";
import { KeptFile } from "../body/kept-file.ts";
import { createApp, NO_KEYS, readyWithKeys } from "./app.ts";
import { clientAddress, createHandler, trustedProxy, type FetchHandler } from "../edge/server.ts";
import { createCors } from "../edge/cors.ts";
import { isMonitoringPath, rawRoutePatterns } from "../edge/routes.ts";
import { createRateLimiter, type RateLimiter } from "../key/rate-limit.ts";
import { createBufferBudget, type BufferBudget } from "../body/body.ts";

const READINESS_TIMEOUT_MS = 2000;

/** The settings request handling reads. */
export type ServiceSettings = Pick<
  Config,
  | "maxRangeDays"
  | "statementTimeoutMs"
  | "dbConnectTimeoutMs"
  | "docsEnabled"
  | "requestTimeoutMs"
  | "requestQueueMax"
  | "requestQueueTimeoutMs"
  | "responseBufferMb"
  | "answerCacheMb"
  | "edgeCacheMb"
  | "rateLimitPerMinute"
  | "trustedProxies"
  | "corsAllowedOrigins"
  | "monitoringPort"
>;

export interface ServiceParts {
  settings: ServiceSettings;
  database: Pick<Database, "sql" | "readinessSql" | "servesDemoData" | "ask">;
  /** The active keys; a function so that SIGHUP can swap them without a restart. */
  keys: () => ApiKeyRing;
  logger: Logger;
  /** /metrics, fed by every request (none: METRICS_ENABLED=false). */
  metrics?: ServiceMetrics;
  /** What /healthz says it runs and the ETags name. */
  build?: { version: string; commit: string };
  // Parts a test builds itself, to watch them or to tune them past what a setting allows;
  // `serve` leaves them to the settings.
  admission?: Admission;
  readAhead?: BufferBudget;
  answerCache?: AnswerCache;
  edgeStore?: EdgeStore;
  rateLimiter?: RateLimiter;
  firstBatchTimeoutMs?: number;
  batchSize?: number;
  /** Why the server is closing connections itself right now (exchange.ts), if it is. */
  serverCut?: () => Error | undefined;
  /** True once shutting down: readiness then logs no change (closing the pool fails a check for no reason of the database's). */
  stopping?: () => boolean;
}

export interface Service {
  /** The API's listener: every route, or with MONITORING_PORT all but the monitoring routes. */
  handle: FetchHandler;
  /** With MONITORING_PORT: the monitoring routes' own listener (routes.ts: isMonitoringPath). */
  monitoringHandle?: FetchHandler;
  /** The patterns to register with Bun's router, each routed to `handle` (raw-routes.ts). */
  rawRoutes: readonly string[];
  /** Whether a request would be answered now (/readyz, and the start-up line). */
  readiness: () => Promise<Readiness>;
}

export function createService(parts: ServiceParts): Service {
  const { settings, database, logger, metrics } = parts;
  const guard = createDatabaseGuard(logger);
  // Checked on the serving pool: a first request waits for no readiness check queued on its
  // own session (a silent database would make it wait for both); the check is catalog reads.
  const source = sourceChoice(database.sql, logger, guard);
  // The readiness check finds the source as it goes: the start's check makes the first choice.
  const logChange = readinessLog(logger, guard);
  const readiness = async () => {
    const ready = await checkReadiness(database.readinessSql, READINESS_TIMEOUT_MS, guard);
    if (ready.ready) source.observed(ready.source);
    if (!parts.stopping?.()) logChange(ready);
    return ready;
  };
  const answerCache = parts.answerCache ?? (settings.answerCacheMb > 0 ? answerCacheIn(tmpdir(), settings.answerCacheMb) : undefined);
  // Always there: a key's own rate= applies even when RATE_LIMIT_PER_MINUTE is 0.
  const rateLimiter = parts.rateLimiter ?? createRateLimiter(settings.rateLimitPerMinute);
  const sql = database.sql;

  // The reads: at most a pool's worth at once (a read holds a connection while its body
  // streams), what is held between them, and what a range read by its statement lacked, read
  // once no request has read for a while.
  const admission =
    parts.admission ??
    createAdmission({ maxConcurrent: sql.options.max, maxQueued: settings.requestQueueMax, queueTimeoutMs: settings.requestQueueTimeoutMs });
  const edgeStore = parts.edgeStore ?? new EdgeStore(settings.edgeCacheMb * 2 ** 20);
  const warmer =
    edgeStore.limitBytes > 0
      ? createEdgeWarmer({
          sql,
          store: edgeStore,
          activity: admission.activity,
          inSlot: (work) => admission.run(new AbortController().signal, work),
          debug: (msg, fields) => logger.debug(msg, fields),
        })
      : undefined;
  const reads = answerReads({
    sql,
    admission,
    guard,
    source,
    limits: {
      // The statement timeout answers first; this catches a database that does not answer at all.
      firstBatchTimeoutMs: parts.firstBatchTimeoutMs ?? settings.statementTimeoutMs + 1000,
      connectTimeoutMs: settings.dbConnectTimeoutMs,
      // A database that stops answering altogether (a partition, a frozen proxy) is told from a
      // slow one within about the time a connection may take to open.
      ...(database.ask ? { silence: createSilenceWatch(database.ask, settings.dbConnectTimeoutMs) } : {}),
    },
    rows: { batchSize: parts.batchSize, edges: edgeStore, warmer },
  });
  const answer: AnswerParts = {
    cache: answerCache,
    // What the ETags name besides the data: another build may write other bytes.
    build: parts.build ? `${parts.build.version} ${parts.build.commit}` : "",
    budget: parts.readAhead ?? createBufferBudget(settings.responseBufferMb * 2 ** 20),
  };

  // The rollup's lag, where the rollup is read: a role that may read the daily rows alone would
  // have each scrape and /readyz poll refused (an ERROR line in PostgreSQL's log each time).
  const rollupLag = async () => (source.last()?.name === "daily" ? undefined : await readRollupLag(database.readinessSql, READINESS_TIMEOUT_MS));
  const readyNow = readyWithKeys(readiness, parts.keys);
  // The gauges /metrics shows besides the requests, each read from its part when scraped.
  if (metrics) {
    metrics.trackPool(() => {
      const { running, queued } = admission.stats();
      return { inUse: running, waiting: queued, max: sql.options.max };
    });
    if (answerCache) metrics.trackAnswerCache(() => answerCache.stats());
    metrics.trackEdgeStore(() => ({ ...edgeStore.stats(), waiting: warmer?.pending() ?? 0 }));
    metrics.trackReadSource(() => source.last()?.name);
    metrics.trackKeys(() => parts.keys().listing);
    metrics.trackRollupLag(rollupLag);
    metrics.trackReadiness(async () => {
      const r = await readyNow();
      return r === NO_KEYS ? NOT_CONFIGURED().detail : r.ready ? null : r.problem.code;
    });
  }

  const app = createApp({
    productCosts: { keys: parts.keys, rateLimiter, maxRangeDays: settings.maxRangeDays, reads, answer },
    status: { readyNow, rollupLag, demoData: database.servesDemoData, build: parts.build },
    docsEnabled: settings.docsEnabled,
    metrics,
  });
  const rawRoutes = rawRoutePatterns(app.routes.map((r) => r.path));
  const handlerOptions = {
    rawRoutes,
    observe: metrics?.observer(app.routes),
    // Every answer of a demo says so, so that made-up costs are never mistaken for real ones.
    headers: database.servesDemoData ? { "x-demo-data": "true" } : undefined,
    requestTimeoutMs: settings.requestTimeoutMs,
    clientAddress: clientAddress(settings.trustedProxies),
    trustedProxy: trustedProxy(settings.trustedProxies),
    serverCut: parts.serverCut,
  };
  // Cross-origin reads on the API's listener alone: a page has no business with the monitoring one.
  const cors = createCors(settings.corsAllowedOrigins);
  if (!settings.monitoringPort) return { handle: createHandler(app, logger, { ...handlerOptions, cors }), rawRoutes, readiness };
  return {
    handle: createHandler(app, logger, { ...handlerOptions, cors, serves: (path) => !isMonitoringPath(path) }),
    monitoringHandle: createHandler(app, logger, { ...handlerOptions, serves: isMonitoringPath }),
    rawRoutes,
    readiness,
  };
}

/** The answer cache, its files in `directory`: one is made and dropped now, so that a directory it cannot use stops the start. */
function answerCacheIn(directory: string, mb: number): AnswerCache {
  try {
    KeptFile.create(directory).drop();
  } catch (err) {
    throw new ConfigError(`ANSWER_CACHE_MB=${mb} keeps answers in files under ${directory}, and none can be made there (${(err as Error).message}): set TMPDIR to a writable directory, or ANSWER_CACHE_MB=0`);
  }
  return createAnswerCache(mb * 2 ** 20, directory);
}
