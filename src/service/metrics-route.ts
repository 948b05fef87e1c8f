// GET /metrics: the Prometheus text format, no key (restrict it at the network, as usual
// for a scrape target). Not registered at all when METRICS_ENABLED=false.

import { Elysia } from "elysia";
import { PROMETHEUS_TEXT_TYPE } from "../ops/registry.ts";
import type { ServiceMetrics } from "./service-metrics.ts";
import { pageResponse } from "../request/exchange.ts";

export const METRICS_PATH = "/metrics";

export function metricsRoute(metrics: ServiceMetrics | undefined) {
  const app = new Elysia();
  if (!metrics) return app;
  return app.get(
    METRICS_PATH,
    async () => pageResponse(await metrics.render(), { "content-type": PROMETHEUS_TEXT_TYPE, "cache-control": "no-store" }),
    { detail: { hide: true } },
  );
}
