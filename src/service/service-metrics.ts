// The service's metrics: what each request did (by route template, never by raw path, so
// a scan of random URLs adds one series, not thousands), how long it took, how many rows
// went out, how the database pool is used and why database reads failed. Labels carry no
// key, fingerprint, query string or URL: nothing a scrape could leak. Requests per API key
// are counted by the label the operator gave the key in the key file (`<key>  # label`);
// keys without one count together as "unlabelled".

import type { EdgeStoreStats } from "../reads/edges/edge-store.ts";
import { DATABASE_ERROR_KINDS } from "../database/errors.ts";
import type { Failure } from "../failures.ts";
import type { RollupLag } from "../rollup/rollup-lag.ts";
import { Registry } from "../ops/registry.ts";
import type { AnswerCacheCounts } from "../answer/answer-cache.ts";
import { hasExpired, type KeyTerms } from "../key/api-keys.ts";
import type { RequestObservation } from "../request/exchange.ts";

const PREFIX = "product_cost_export_";

/** Seconds; from a health check to a large export on a slow database. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60] as const;

/** The route label of a path that matched no route. */
export const UNMATCHED_ROUTE = "unmatched";

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** A finished request, declared by what is counted so that metrics import nothing of http/ (whose exchange fits). */

/**
 * The database pool as the service uses it. postgres.js keeps its pool's state private, but
 * every read passes admission control, which lets at most `max` (the pool size) run at once.
 */
export interface PoolState {
  /** Reads running, each holding one connection. */
  inUse: number;
  /** Reads waiting for a connection. */
  waiting: number;
  max: number;
}

export interface ServiceMetrics {
  /** The exposition text for GET /metrics (the rollup's lag read from the database first). */
  render(): Promise<string>;
  /** Where the pool gauges read from (the app's admission control). */
  trackPool(read: () => PoolState): void;
  /** Where the rollup's lag gauges read from, at each scrape (undefined: not known, no series). */
  trackRollupLag(read: () => Promise<RollupLag | undefined>): void;
  /** Where the answer cache's series read from (none: no series, ANSWER_CACHE_MB=0). */
  trackAnswerCache(read: () => AnswerCacheCounts): void;
  /** Where the edge store's series read from (EDGE_CACHE_MB: src/reads/edges/edge-store.ts). */
  trackEdgeStore(read: () => EdgeStoreStats & { waiting: number }): void;
  /** The served certificate's expiry (server.ts: certificateNotAfter), when serving HTTPS. */
  trackCertificate(notAfterSeconds: number): void;
  /** Where the keys' expiries read from (the active key ring, swapped by SIGHUP), at each scrape. */
  trackKeys(read: () => readonly KeyTerms[]): void;
  /** Whether a request would be answered now, as /readyz says: null when ready, else its problem's code (read at each scrape). */
  trackReadiness(read: () => Promise<string | null>): void;
  /** Which source reads take their rows from now (undefined before the first read or check: no series). */
  trackReadSource(read: () => "rollup" | "daily" | undefined): void;
  /** Records finished requests; `routes` are the app's route templates (every other path is one label). */
  observer(routes: readonly { path: string }[]): (observation: RequestObservation) => void;
}

export interface ServiceMetricsOptions {
  version: string;
  commit: string;
}

/** The route a path is counted under: Elysia serves /docs/ as /docs, so they count together. */
function routePath(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

export function createServiceMetrics(options: ServiceMetricsOptions): ServiceMetrics {
  const registry = new Registry();
  const startedAt = Date.now() / 1000;
  let pool: () => PoolState = () => ({ inUse: 0, waiting: 0, max: 0 });
  let readSource: () => "rollup" | "daily" | undefined = () => undefined;
  let readLag: () => Promise<RollupLag | undefined> = async () => undefined;
  let cache: (() => AnswerCacheCounts) | undefined;
  let edges: (() => EdgeStoreStats & { waiting: number }) | undefined;
  let lag: RollupLag | undefined; // as read for the scrape being rendered
  let readReadiness: (() => Promise<string | null>) | undefined;
  let certificateExpiry: number | undefined;
  let keys: () => readonly KeyTerms[] = () => [];
  let notReady: string | null | undefined; // as read for the scrape being rendered (undefined: not tracked)

  const requests = registry.counter(`${PREFIX}http_requests_total`, "HTTP requests answered, by method, route template and status.");
  const duration = registry.histogram(
    `${PREFIX}http_request_duration_seconds`,
    "Time from a request's arrival to the last byte of its response body, by route template.",
    DURATION_BUCKETS,
  );
  const keyRequests = registry.counter(
    `${PREFIX}requests_by_key_total`,
    'Requests to the API that presented a valid key, by key (its label in the key file, or "unlabelled") and status.',
  );
  const rows = registry.counter(`${PREFIX}rows_served_total`, "Product cost rows written to response bodies, by format (json, csv or arrow).");
  const dbErrors = registry.counter(`${PREFIX}database_errors_total`, "Requests that failed because of the database, by kind (timeout, unavailable, misconfigured, query).");
  const cutShort = registry.counter(
    `${PREFIX}responses_cut_short_total`,
    "Responses whose body ended before its last byte, by cause: client (the client went away: logged as 499) or server (a failure while streaming: logged as 5xx).",
  );
  const timeouts = registry.counter(
    `${PREFIX}request_timeouts_total`,
    "Requests cut by REQUEST_TIMEOUT_MS: answered 503 before the first byte, or their transfer cut (often a slow client).",
  );
  // Every series that can exist without a request label exists from the start, so rate() works at once.
  timeouts.inc({}, 0);
  for (const cause of ["client", "server"]) cutShort.inc({ cause }, 0);
  for (const format of ["arrow", "csv", "json"]) rows.inc({ format }, 0);
  for (const kind of DATABASE_ERROR_KINDS) dbErrors.inc({ kind }, 0);
  registry.gauge(
    `${PREFIX}database_pool_connections`,
    "Connections of the database pool held by reads (in_use) and free for the next read (idle: open or not yet opened).",
    () => {
      const p = pool();
      return [
        [{ state: "in_use" }, p.inUse],
        [{ state: "idle" }, Math.max(0, p.max - p.inUse)],
      ];
    },
  );
  registry.gauge(`${PREFIX}database_pool_max`, "Size of the database pool.", () => [[{}, pool().max]]);
  registry.gauge(`${PREFIX}database_pool_waiting`, "Reads waiting for a connection because every one is in use.", () => [[{}, pool().waiting]]);
  registry.gauge(
    `${PREFIX}rollup_changes_waiting`,
    "Changes writers made that the refresh has not folded into the rollup yet (notes in product_cost_deltas, counted up to a million). Answers are exact regardless; reads of ranges with changes waiting are slower.",
    () => (lag ? [[{}, lag.changesWaiting]] : []),
  );
  registry.gauge(
    `${PREFIX}rollup_last_refresh_age_seconds`,
    "Seconds since the last refresh committed, by the database's clock (the timer or the service's own refresh; one that found nothing to fold counts). Absent when none has run.",
    () => (lag?.lastRefreshAgeSeconds != null ? [[{}, lag.lastRefreshAgeSeconds]] : []),
  );
  registry.gauge(
    `${PREFIX}rollup_last_refresh_duration_seconds`,
    "How long the last refresh took, from its start to its last commit (one that found nothing to fold counts). Absent when none has run.",
    () => (lag?.lastRefreshDurationSeconds != null ? [[{}, lag.lastRefreshDurationSeconds]] : []),
  );
  registry.gauge(
    `${PREFIX}rollup_refresh_running_seconds`,
    "How long the refresh running now (the timer's, the service's own, migrate's or load-csv's) has run; 0 when none runs. Its steps commit as it goes, and the next refresh waits for it.",
    () => (lag ? [[{}, lag.refreshRunningSeconds]] : []),
  );
  registry.gauge(
    `${PREFIX}rollup_refresh_failing`,
    "1 when the last refresh could not fold some products' changes (a step failed: its log line names the product, the months and PostgreSQL's error); 0 when it folded everything. Answers stay exact; those products' reads get slower as their changes wait.",
    () => (lag ? [[{}, lag.refreshFailing ? 1 : 0]] : []),
  );
  registry.gauge(
    `${PREFIX}ready`,
    "1 when a request would be answered now (GET /readyz's 200), 0 when not: a database problem or no API key, named by not_ready. Read at each scrape, so an outage shows without traffic.",
    () => (notReady === undefined ? [] : [[{}, notReady === null ? 1 : 0]]),
  );
  registry.gauge(
    `${PREFIX}not_ready`,
    "1, labelled with the problem /readyz names (DATABASE_UNAVAILABLE, AUTHENTICATION_FAILED, EXTERNAL_API_NOT_CONFIGURED ...), while the service is not ready; absent when it is.",
    () => (notReady ? [[{ problem: notReady }, 1]] : []),
  );
  registry.gauge(
    `${PREFIX}read_source`,
    "Where reads take their rows from now: 1 for the source in use, 0 for the other. rollup: the rollup `migrate` builds; daily: the daily rows directly, where the rollup is not there for this build or the role may not read it (exact either way; long ranges slower, no ETags).",
    () => {
      const now = readSource();
      return now ? (["rollup", "daily"] as const).map((name) => [{ source: name }, name === now ? 1 : 0]) : [];
    },
  );
  const cached = (pick: (c: AnswerCacheCounts) => number) => (): [Record<string, string>, number][] => (cache ? [[{}, pick(cache())]] : []);
  registry.counterOf(`${PREFIX}answer_cache_hits_total`, "Requests answered from the answer cache (the same version of the same question).", cached((c) => c.hits));
  registry.counterOf(`${PREFIX}answer_cache_misses_total`, "Requests the answer cache could not answer (never asked, written since, or pushed out).", cached((c) => c.misses));
  registry.counterOf(`${PREFIX}answer_cache_evictions_total`, "Answers pushed out of the cache to stay within ANSWER_CACHE_MB, least recently used first.", cached((c) => c.evictions));
  registry.gauge(`${PREFIX}answer_cache_bytes`, "Bytes the answer cache holds (answers and their compressed forms).", cached((c) => c.bytes));
  registry.gauge(`${PREFIX}answer_cache_entries`, "Answers the answer cache holds.", cached((c) => c.entries));
  const held = (pick: (e: EdgeStoreStats & { waiting: number }) => number) => (): [Record<string, string>, number][] => (edges ? [[{}, pick(edges())]] : []);
  registry.gauge(`${PREFIX}edge_cache_bytes`, "Bytes the edge store holds (EDGE_CACHE_MB): the products' catalogue, their slots and the edges held.", held((e) => e.bytes));
  registry.gauge(`${PREFIX}edge_cache_limit_bytes`, "Bytes the edge store may hold (EDGE_CACHE_MB).", held((e) => e.limitBytes));
  registry.gauge(`${PREFIX}edge_cache_edges`, "Edges (every product's totals through a day, at one version) the edge store holds.", held((e) => e.edges));
  registry.counterOf(`${PREFIX}edge_cache_hits_total`, "Edges a read of a range found held (at the version it reads).", held((e) => e.hits));
  registry.counterOf(`${PREFIX}edge_cache_misses_total`, "Edges a read of a range read from the database (never read, written since, or let go).", held((e) => e.misses));
  registry.counterOf(`${PREFIX}edge_cache_catalogue_reads_total`, "Reads of ranges that read the products' catalogue (none held at their version: a product or a day written since).", held((e) => e.catalogueMisses));
  registry.gauge(`${PREFIX}edge_cache_ranges_waiting`, "Ranges read by their one statement whose edges wait to be read in the background once no request is reading (the one being read included).", held((e) => e.waiting));
  registry.gauge(
    `${PREFIX}tls_certificate_expiry_timestamp_seconds`,
    "When the certificate served expires (the chain's earliest notAfter), in seconds since the epoch; absent without HTTPS. The one read at start: a renewed certificate is served, and shown here, after a restart.",
    () => (certificateExpiry === undefined ? [] : [[{}, certificateExpiry]]),
  );
  registry.gauge(`${PREFIX}api_keys`, "API keys configured, by state: active, or expired (past the key file's expires=; refused with 401 until removed).", () => {
    const now = Date.now();
    const all = keys();
    const expired = all.filter((k) => hasExpired(k, now)).length;
    return [
      [{ state: "active" }, all.length - expired],
      [{ state: "expired" }, expired],
    ];
  });
  registry.gauge(
    `${PREFIX}api_key_nearest_expiry_timestamp_seconds`,
    "When the next active key expires (the earliest expires= of the key file's keys not yet expired), in seconds since the epoch; absent when no active key has an expiry.",
    () => {
      const now = Date.now();
      let next = Infinity; // a loop, not Math.min(...): a file may hold 100,000 keys
      for (const k of keys()) if (k.expiresAt !== undefined && !hasExpired(k, now) && k.expiresAt < next) next = k.expiresAt;
      return Number.isFinite(next) ? [[{}, next / 1000]] : [];
    },
  );
  registry.gauge(`${PREFIX}build_info`, "The running version and commit (always 1).", () => [[{ version: options.version, commit: options.commit }, 1]]);
  registry.gauge("process_start_time_seconds", "Start time of the process since the Unix epoch, in seconds.", () => [[{}, startedAt]]);
  registry.gauge("process_resident_memory_bytes", "Resident memory size, in bytes.", () => [[{}, process.memoryUsage.rss()]]);
  registry.counterOf("process_cpu_seconds_total", "User and system CPU time spent, in seconds.", () => {
    const cpu = process.cpuUsage();
    return [[{}, (cpu.user + cpu.system) / 1e6]];
  });

  return {
    async render() {
      [lag, notReady] = await Promise.all([readLag().catch(() => undefined), readReadiness?.().catch(() => "READINESS_CHECK_FAILED")]);
      return registry.render();
    },
    trackPool(read) {
      pool = read;
    },
    trackRollupLag(read) {
      readLag = read;
    },
    trackAnswerCache(read) {
      cache = read;
    },
    trackEdgeStore(read) {
      edges = read;
    },
    trackCertificate(notAfterSeconds) {
      certificateExpiry = notAfterSeconds;
    },
    trackKeys(read) {
      keys = read;
    },
    trackReadiness(read) {
      readReadiness = read;
    },
    trackReadSource(read) {
      readSource = read;
    },
    observer(routeList) {
      const routes = new Set(routeList.map((r) => r.path));
      return ({ request, status, end, exchange, seconds, failure }) => {
        const path = routePath(exchange.target.path);
        const route = routes.has(path) && !exchange.walked ? path : UNMATCHED_ROUTE;
        const method = METHODS.has(request.method) ? request.method : "OTHER";
        requests.inc({ method, route, status: String(status) });
        if (exchange.key) keyRequests.inc({ key: exchange.key.label ?? "unlabelled", status: String(status) });
        if (end !== "complete") cutShort.inc({ cause: end === "client_closed" ? "client" : "server" });
        duration.observe({ route }, seconds);
        // The Excel-safe variant is CSV rows too: the label keeps its two values.
        if (exchange.rows !== undefined) rows.inc({ format: exchange.format === "csv-excel" ? "csv" : (exchange.format ?? "json") }, exchange.rows);
        const counted = failure?.metric;
        if (counted === "request_timeout") timeouts.inc({});
        else if (counted) dbErrors.inc({ kind: counted });
      };
    },
  };
}
