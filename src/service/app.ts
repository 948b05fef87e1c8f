// The Elysia application's routes, without listening (service.ts assembles the parts they are
// given, once): the endpoint's stages (pipeline.ts), the status routes, /metrics and the docs.

import { Elysia } from "elysia";
import type { ApiKeyRing } from "../key/api-keys.ts";
import { DAILY_ADVICE } from "../reads/read-source.ts";
import type { Readiness } from "../reads/readiness.ts";
import { lagIsLarge, LARGE_LAG_SECONDS, type RollupLag } from "../rollup/rollup-lag.ts";
import { apiDocs } from "./api-docs.ts";
import { productCostsPipeline, type PipelineParts } from "./pipeline.ts";
import { DatabaseProblemError } from "../database/problems.ts";
import { createErrorHandler } from "../edge/error-handler.ts";
import { NOT_CONFIGURED } from "../failures.ts";
import type { ServiceMetrics } from "./service-metrics.ts";
import { metricsRoute } from "./metrics-route.ts";
import { exchangeOf, jsonResponse } from "../request/exchange.ts";

/** What /healthz and /readyz say. */
export interface StatusRouteParts {
  /** Whether a request would be answered now, and if not, why (readyWithKeys). */
  readyNow: () => Promise<Readiness | typeof NO_KEYS>;
  /** How far the rollup lags behind the writers: /readyz names a large lag (none: not reported). */
  rollupLag?: () => Promise<RollupLag | undefined>;
  /** The embedded demo dataset is served: /readyz says so. */
  demoData?: boolean;
  /** What /healthz says it runs. */
  build?: { version: string; commit: string };
}

export interface AppParts {
  productCosts: PipelineParts;
  status: StatusRouteParts;
  /** DOCS_ENABLED: /docs and /openapi.json (default on). */
  docsEnabled?: boolean;
  /** Serves GET /metrics; no /metrics route when absent (METRICS_ENABLED=false). */
  metrics?: ServiceMetrics;
}

/**
 * Whether a request would be answered now, as /readyz answers and the gauge shows: the
 * database's problem first, then no key (every API request would answer 503).
 */
export function readyWithKeys(readiness: () => Promise<Readiness>, keys: () => ApiKeyRing): () => Promise<Readiness | typeof NO_KEYS> {
  return async () => {
    const r = await readiness();
    return r.ready && keys().size === 0 ? NO_KEYS : r;
  };
}

/** /healthz (the process) and /readyz (whether a request would be answered now). */
function statusRoutes(deps: StatusRouteParts) {
  const { readyNow, rollupLag } = deps;
  const healthz = { detail: "OK", ...(deps.build ? { version: deps.build.version, commit: deps.build.commit } : {}) };
  return new Elysia()
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
    );
}

/** The routes, in the order they are matched, behind the one error hook. */
export function createApp(parts: AppParts) {
  // The routes are read when a request matches none: by then the app below has them all.
  let served: () => readonly { method: string; path: string }[] = () => [];
  const app = new Elysia()
    .onError(createErrorHandler(() => served()))
    .use(parts.docsEnabled === false ? new Elysia() : apiDocs())
    .use(metricsRoute(parts.metrics))
    .use(statusRoutes(parts.status))
    .use(productCostsPipeline(parts.productCosts));
  served = () => app.routes;
  return app;
}

/** Ready but for the keys: none is configured. */
export const NO_KEYS = "no keys";
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
