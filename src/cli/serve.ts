// `serve`: the service itself. Opens the database, assembles the request handling on it
// (service/service.ts, the wiring the in-process tests use too), listens, tells systemd its
// state, reloads keys on SIGHUP, runs the service's own refresh when configured, and drains
// requests on SIGTERM/SIGINT before it exits.

import { loadKeyRing, type ApiKeyRing } from "../key/api-keys.ts";
import { takeOverSighup } from "../early-signals.ts";
import { ConfigError, type Config } from "../settings/config.ts";
import { ShutdownCutError } from "../failures.ts";
import { startBackgroundRefresh } from "../rollup/background-refresh.ts";
import { openDatabase } from "../backends/open.ts";
import { certificateNotAfter, listen, readTls } from "../edge/server.ts";
import { createService } from "../service/service.ts";
import { errorFields, type Logger } from "../ops/log.ts";
import { createServiceMetrics } from "../service/service-metrics.ts";
import { logKeyWarnings, reloader, tlsDigest } from "./reload.ts";
import { noteReloadDone } from "./stage-files.ts";
import { systemdNotifier, type Notifier } from "../ops/notify.ts";
import { COMMIT, VERSION } from "../version.ts";
import type { CommandLine } from "./command-line.ts";

/** Tells systemd the service's state (Type=notify); a failure is logged, never fatal. */
function stateTeller(logger: Logger): (state: string) => void {
  let notifier: Notifier;
  try {
    notifier = systemdNotifier();
  } catch (err) {
    logger.error("cannot tell systemd the service's state: systemd will time the start out", errorFields(err));
    return () => {};
  }
  return (state) => {
    try {
      notifier.notify(state);
    } catch (err) {
      logger.error("cannot tell systemd the service's state", { state: state.split("\n")[0], ...errorFields(err) });
    }
  };
}

export async function serve({ config }: CommandLine, logger: Logger): Promise<void> {
  checkServeDatabase(config, Boolean((process.env.INVOCATION_ID || process.env.NOTIFY_SOCKET) && !process.stdin.isTTY));
  const tell = stateTeller(logger);
  let keys: ApiKeyRing = loadKeyRing(config);
  const db = await openDatabase(config, true, logger);
  const metrics = config.metricsEnabled ? createServiceMetrics({ version: VERSION, commit: COMMIT }) : undefined;
  let serverCut: ShutdownCutError | undefined; // set when the shutdown timeout closes what is left
  let stopping = false;
  const { handle, monitoringHandle, rawRoutes, readiness } = createService({
    serverCut: () => serverCut,
    stopping: () => stopping,
    settings: config,
    database: db,
    keys: () => keys,
    logger,
    metrics,
    build: { version: VERSION, commit: COMMIT },
  });
  const tlsServed = tlsDigest(config);
  const server = listen(config, handle, logger, rawRoutes);
  // Plain HTTP on its own address (127.0.0.1 by default): for Prometheus and the load balancer's checks.
  const monitoring = monitoringHandle && listen({ host: config.monitoringHost, port: config.monitoringPort }, monitoringHandle, logger, rawRoutes);
  const tls = metrics && readTls(config);
  if (tls) metrics.trackCertificate(certificateNotAfter(tls.cert));
  // Signal handlers before the "listening" line: a signal sent as soon as it appears must not kill the process.
  // A SIGHUP that came earlier (early-signals.ts kept it) is applied now, once.
  takeOverSighup(
    reloader(
      { config, logger, tlsServed, keys: () => keys, setKeys: (next) => (keys = next) },
      // RELOADING with the monotonic time of its start (systemd 253 asks for it), READY when done.
      () => tell(`RELOADING=1\nMONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`),
      () => {
        tell("READY=1");
        noteReloadDone();
      },
    ),
  );
  const backgroundRefresh = config.refreshDatabaseUrl
    ? startBackgroundRefresh({ url: config.refreshDatabaseUrl, intervalMs: config.refreshIntervalS * 1000, connectTimeoutMs: config.dbConnectTimeoutMs, logger })
    : undefined;

  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    tell("STOPPING=1");
    logger.info("shutting down", { signal, in_flight: server.pendingRequests });
    void monitoring?.stop(false);
    const drained = server.stop(false).then(() => true);
    const timedOut = Bun.sleep(config.shutdownTimeoutMs).then(() => false);
    if (!(await Promise.race([drained, timedOut]))) {
      logger.warn("shutdown timeout reached, closing the remaining connections", { in_flight: server.pendingRequests });
      serverCut = new ShutdownCutError(config.shutdownTimeoutMs);
      await server.stop(true);
    }
    // A refresh in progress commits or rolls back first (its work is not lost either way).
    await backgroundRefresh?.stop();
    // Every request has ended (or was cut): what may still wait on the pool is a readiness
    // check or a connection attempt to a database that is down. Nothing to wait for.
    await db.close(0).catch(() => {});
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  logger.info("listening", {
    version: VERSION,
    commit: COMMIT,
    url: server.url.toString(),
    ...(monitoring ? { monitoring_url: monitoring.url.toString() } : {}),
    database: db.description,
    api_keys: keys.size,
    refresh: backgroundRefresh ? `by the service, every ${config.refreshIntervalS} s` : "by the refresh timer (or by hand)",
    // Time since the process started; for the embedded database, where its start went.
    startup_ms: Math.round(performance.now()),
    ...(db.startTimings ? { database_start_ms: db.startTimings } : {}),
  });
  // Answering requests now: `systemctl start` returns, units ordered after this one start.
  tell(`READY=1\nSTATUS=listening on ${server.url}`);
  if (db.servesDemoData) {
    logger.warn("serving embedded demo data", {
      where: config.dataDir ? `in data dir ${config.dataDir}: kept across restarts, with or without --demo-data` : "in memory, gone at exit",
      hint: config.dataDir
        ? "the demo stays in this data dir: keep your own data in a new one made without --demo-data (load-csv), or set DATABASE_URL"
        : "set DATABASE_URL to serve your PostgreSQL, or --data-dir with load-csv to keep your own data",
    });
  }
  logKeyWarnings(logger, keys);
  // One line on whether requests will be answered; it keeps serving (and retrying) either way.
  // Not ready, the check itself has said why, once ("database not usable", or "database not
  // ready": readiness.ts). (Not once shutting down: closing the pool would fail the check for no
  // reason of the database's.)
  const ready = await readiness();
  if (stopping) return;
  // (The daily rows' source is said by its own warning, with why and what `migrate` gives.)
  if (ready.ready) logger.info("database ready", { database: db.description, source: ready.source.name === "daily" ? "daily rows" : "rollup" });
}

/**
 * Which database `serve` reads when none is configured, failing closed: the embedded demo
 * data (made-up costs) only when asked for (DEMO_DATA=true) or when a person runs the
 * executable by hand. Under systemd, or with DEMO_DATA=false, a missing DATABASE_URL is a
 * configuration error: a credential that did not load must not turn into a service that
 * answers 200 with demo costs. `underSystemd`: INVOCATION_ID or NOTIFY_SOCKET is set and
 * stdin is not a terminal (a shell inside a desktop's systemd session is still "by hand").
 */
function checkServeDatabase(config: Config, underSystemd: boolean): void {
  if (config.databaseUrl || config.dataDir || config.demoData === true) return;
  if (config.demoData === false) {
    throw new ConfigError("DEMO_DATA=false and no database: set DATABASE_URL (your PostgreSQL) or DATA_DIR (the embedded database, kept on disk)");
  }
  if (underSystemd) {
    throw new ConfigError(
      "no database configured: set DATABASE_URL (your PostgreSQL), or DATA_DIR for the embedded database; DEMO_DATA=true serves made-up demo costs on purpose",
    );
  }
}
