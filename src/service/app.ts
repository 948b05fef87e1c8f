// createApp builds the Elysia application without listening, so tests can call it in
// process. The endpoint walks named stages in the order docs/api.md (Errors) fixes:
//   503 no key configured → 401 key → 422 query validation → 400 range → query → rows.

import { Elysia } from "elysia";
import type { ApiKeyRing } from "../key/api-keys.ts";
import { bearerCredentials } from "../key/bearer.ts";
import type { Sql } from "../database/client.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import { DAILY_ADVICE, type SourceChoice } from "../reads/read-source.ts";
import type { Readiness } from "../reads/readiness.ts";
import { lagIsLarge, LARGE_LAG_SECONDS, type RollupLag } from "../rollup/rollup-lag.ts";
import type { SilenceWatch } from "../database/silence.ts";
import type { Logger } from "../ops/log.ts";
import { lastValues } from "../query/query-string.ts";
import { productCostParams, rangeDays } from "../query/product-cost-params.ts";
import { ADMISSION_DEFAULTS, createAdmission, type Admission } from "../answer/admission.ts";
import { apiDocs, PRODUCT_COSTS_RESPONSES } from "./api-docs.ts";
import { DatabaseProblemError } from "../database/problems.ts";
import { createErrorHandler } from "../edge/error-handler.ts";
import { INVALID_API_KEY, INVALID_MONTH_RANGE, NOT_CONFIGURED } from "../failures.ts";
import type { RateLimiter } from "../key/rate-limit.ts";
import type { ServiceMetrics } from "./service-metrics.ts";
import { metricsRoute } from "./metrics-route.ts";
import { preferredRowFormat } from "../query/accept.ts";
import { exchangeOf } from "../request/exchange.ts";
import { jsonResponse } from "../request/responses.ts";
import type { BufferBudget } from "../body/read-ahead.ts";
import { productCostsAnswer } from "../answer/product-costs-answer.ts";
import type { EdgeStore } from "../reads/edges/edge-store.ts";
import { createEdgeWarmer } from "../reads/edges/edge-warmer.ts";
import type { AnswerCache } from "../answer/answer-cache.ts";
import { answerKey } from "../query/answer-key.ts";
import { PRODUCT_COSTS_PATH } from "../edge/routes.ts";
import { ProductCostsQuery } from "../query/schemas.ts";

export interface AppDeps {
  /** The active keys; a function so that SIGHUP can swap them without a restart. */
  keys: () => ApiKeyRing;
  sql: Sql;
  logger: Logger;
  maxRangeDays: number;
  /** Deadline for the database's first answer (the statement timeout plus a margin). */
  firstBatchTimeoutMs: number;
  /** Answers /readyz: whether a request would be answered now, and if not, why. */
  readiness: () => Promise<Readiness>;
  /** How far the rollup lags behind the writers: the gauges of /metrics, and /readyz when large (none: not reported). */
  rollupLag?: () => Promise<RollupLag | undefined>;
  /** Holds requests back while the database is known to be unusable (none: every request tries). */
  guard?: DatabaseGuard;
  /** The embedded demo dataset is served: /readyz says so. */
  demoData?: boolean;
  /** DOCS_ENABLED: /docs and /openapi.json (default on). */
  docsEnabled?: boolean;
  /** What /healthz says it runs. */
  build?: { version: string; commit: string };
  batchSize?: number;
  /** Bounds concurrent and waiting reads (defaults: ADMISSION_DEFAULTS). */
  admission?: Admission;
  /** Per-key requests per minute (429 RATE_LIMITED); none when absent. */
  rateLimiter?: RateLimiter;
  /** Deadline for getting a database connection at all. */
  connectTimeoutMs?: number;
  /** Tells a silent database from a slow one while a read waits (none: only the deadlines above). */
  silence?: SilenceWatch;
  /** Memory for answers read ahead of slow clients (read-ahead.ts); none: sent at the client's pace. */
  readAhead?: BufferBudget;
  /** Serves GET /metrics and is fed by the handler; no /metrics route when absent (METRICS_ENABLED=false). */
  metrics?: ServiceMetrics;
  /** Whole answers kept in memory for their version (ANSWER_CACHE_MB); none: every 200 is read from the database. */
  answerCache?: AnswerCache;
  /** What reads of ranges keep for the next (EDGE_CACHE_MB); none: each read reads all it needs. */
  edgeStore?: EdgeStore;
  /** Where reads take their rows from (the rollup or the daily rows); none: the rollup, always. */
  source?: SourceChoice;
}

export function createApp(deps: AppDeps) {
  const admission = deps.admission ?? createAdmission(ADMISSION_DEFAULTS);
  deps.metrics?.trackPool(() => {
    const { running, queued } = admission.stats();
    return { inUse: running, waiting: queued, max: deps.sql.options.max };
  });

  const answerCache = deps.answerCache;
  // What the ETags name besides the data: another build may write other bytes.
  const build = deps.build ? `${deps.build.version} ${deps.build.commit}` : "";
  if (answerCache) deps.metrics?.trackAnswerCache(() => answerCache.stats());
  const edgeStore = deps.edgeStore;
  // What a range read by its statement lacked, read once no request has read for a while.
  const warmer =
    edgeStore && edgeStore.limitBytes > 0
      ? createEdgeWarmer({
          sql: deps.sql,
          store: edgeStore,
          activity: () => {
            const { running, queued, granted } = admission.stats();
            return { busy: running > 0 || queued > 0, begun: granted };
          },
          inSlot: (work) => admission.run(new AbortController().signal, work),
          debug: (msg, fields) => deps.logger.debug(msg, fields),
        })
      : undefined;
  if (edgeStore) deps.metrics?.trackEdgeStore(() => ({ ...edgeStore.stats(), waiting: warmer?.pending() ?? 0 }));
  const source = deps.source;
  if (source) deps.metrics?.trackReadSource(() => source.last()?.name);
  // The rollup's lag, where the rollup is read: a role that may read the daily rows alone would
  // have each scrape and /readyz poll refused (an ERROR line in PostgreSQL's log each time).
  const readLag = deps.rollupLag;
  const rollupLag = readLag && (async () => (source?.last()?.name === "daily" ? undefined : await readLag()));
  if (rollupLag) deps.metrics?.trackRollupLag(rollupLag);
  // Whether a request would be answered now, as /readyz answers and the gauge shows: the
  // database's problem first, then no key (every API request would answer 503).
  const readyNow = async (): Promise<Readiness | typeof NO_KEYS> => {
    const r = await deps.readiness();
    return r.ready && deps.keys().size === 0 ? NO_KEYS : r;
  };
  deps.metrics?.trackReadiness(async () => {
    const r = await readyNow();
    return r === NO_KEYS ? NOT_CONFIGURED().detail : r.ready ? null : r.problem.code;
  });
  const answer = productCostsAnswer({
    sql: deps.sql,
    admission,
    guard: deps.guard,
    source,
    firstBatchTimeoutMs: deps.firstBatchTimeoutMs,
    connectTimeoutMs: deps.connectTimeoutMs,
    silence: deps.silence,
    batchSize: deps.batchSize,
    cache: answerCache,
    edges: edgeStore,
    warmer,
    build,
    budget: deps.readAhead,
  });
  const productCosts = new Elysia()
    // The query Elysia validates is read as Starlette reads it (query-string.ts), from the
    // target the handler read at arrival: Elysia's own parse differs on `??`, `#`, bad escapes.
    .onTransform((ctx) => {
      ctx.query = Object.fromEntries(lastValues(exchangeOf(ctx.request).target.query));
    })
    // The request's own state (exchange.ts), typed, for every hook and handler below.
    .derive(({ request }) => ({ exchange: exchangeOf(request) }))
    // `derive` runs before Elysia's query check, so an unauthenticated caller learns nothing about validation.
    .derive(({ request, exchange }) => {
      const keys = deps.keys();
      if (keys.size === 0) throw NOT_CONFIGURED();
      const presented = bearerCredentials(request.headers.get("authorization"));
      const match = presented === null ? null : keys.match(presented);
      if (!match) throw INVALID_API_KEY();
      exchange.key = match;
      deps.rateLimiter?.take(match.fingerprint);
      return {};
    })
    .get(
      PRODUCT_COSTS_PATH,
      async ({ request, query, exchange }) => {
        const params = productCostParams(query);
        const { monthFrom, monthTo } = params;
        if (monthFrom > monthTo) throw INVALID_MONTH_RANGE();
        if (deps.maxRangeDays > 0 && rangeDays(monthFrom, monthTo) > deps.maxRangeDays) throw INVALID_MONTH_RANGE();

        const key = answerKey(params, preferredRowFormat(request.headers.get("accept")));
        exchange.answer = key;
        return answer(request, exchange, key);
      },
      {
        query: ProductCostsQuery,
        detail: {
          summary: "List product costs",
          description:
            "Four cost columns per product, summed over the inclusive date range [month_from, month_to]. " +
            "null means not costed; 0 is a costed zero.",
          security: [{ bearerAuth: [] }],
          tags: ["product costs"],
          // Written out (not derived from a `response` map) so that each status lists the
          // content types actually sent: the 200 is JSON or CSV, every error is JSON.
          responses: PRODUCT_COSTS_RESPONSES,
        },
      },
    );

  const healthz = { detail: "OK", ...(deps.build ? { version: deps.build.version, commit: deps.build.commit } : {}) };
  // The routes are read when a request matches none: by then the app below has them all.
  let served: () => readonly { method: string; path: string }[] = () => [];
  const app = new Elysia()
    .onError(createErrorHandler(() => served()))
    .use(deps.docsEnabled === false ? new Elysia() : apiDocs())
    .use(metricsRoute(deps.metrics))
    .get("/healthz", () => jsonResponse(200, healthz), { detail: { hide: true } })
    .derive(({ request }) => ({ exchange: exchangeOf(request) }))
    .get(
      "/readyz",
      async ({ exchange }) => {
        const r = await readyNow();
        // With no key at all every API request answers 503: not ready, or a balancer would
        // keep sending it traffic it can only refuse.
        if (r === NO_KEYS) {
          exchange.error = NOT_CONFIGURED();
          return jsonResponse(503, { detail: NOT_CONFIGURED().detail, cause: "no API key configured: every API request answers 503", fix: NO_KEYS_FIX });
        }
        // The log line of a 503 carries the cause and the fix, as the body does.
        if (!r.ready) exchange.error = new DatabaseProblemError(r.problem);
        if (r.ready) {
          // Answers are exact whatever the rollup's lag: still ready, but a large lag is named.
          const lag = rollupLag ? await rollupLag() : undefined;
          const rollup = lag && (lagIsLarge(lag) || lag.refreshFailing) ? { rollup: rollupLagBody(lag) } : {};
          // The daily rows' source is named, with why and what `migrate` would give; the rollup's is not (as before).
          const daily = r.source.name === "daily" ? { source: "daily rows", why: r.source.why, ...DAILY_ADVICE } : {};
          return jsonResponse(200, { detail: "READY", ...(deps.demoData ? { data: "demo" } : {}), ...daily, ...rollup });
        }
        return jsonResponse(503, { detail: r.problem.code, cause: r.problem.summary, fix: r.problem.fix });
      },
      { detail: { hide: true } },
    )
    .use(productCosts);
  served = () => app.routes;
  return app;
}

/** Ready but for the keys: none is configured. */
const NO_KEYS = "no keys";
const NO_KEYS_FIX = "add a key to the key file (product-cost-export generate-key) and reload, or set PRODUCT_COST_API_KEYS (README: API keys)";

/** What /readyz says of a large rollup lag, or of a refresh that could not fold everything. */
function rollupLagBody(lag: RollupLag) {
  const age = lag.lastRefreshAgeSeconds === null ? "no refresh has run" : `the last refresh was ${Math.round(lag.lastRefreshAgeSeconds)} s ago`;
  return {
    changes_waiting: lag.changesWaiting,
    last_refresh_age_seconds: lag.lastRefreshAgeSeconds === null ? null : Math.round(lag.lastRefreshAgeSeconds),
    ...(lagIsLarge(lag)
      ? { warning: `changes wait to be folded into the rollup and ${age} (over ${LARGE_LAG_SECONDS} s): answers stay exact but slower; check the refresh timer (README: Monitoring)` }
      : {}),
    // No product, month or error here (anyone may ask /readyz): the refresh's log line has them.
    ...(lag.refreshFailing
      ? { refresh_failing: "the last refresh could not fold some products' changes: answers stay exact, those products' reads slower; its log line names them and PostgreSQL's error" }
      : {}),
  };
}

export type App = ReturnType<typeof createApp>;
