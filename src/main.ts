// Entry point: argv → command. The only module that reads argv, listens or exits.
//   product-cost-export [serve]   serve the API (default)
//   product-cost-export migrate   create/upgrade the tables, then exit
//   product-cost-export hash-key  print the sha256:<hex> digest of a key read on stdin
//   product-cost-export systemd-unit [refresh|refresh-timer]  print a hardened systemd unit for this executable

import { loadKeyRing, sha256Hex, type ApiKeyRing } from "./auth/api-keys.ts";
import { checkMigrateDatabase, checkServeDatabase, ConfigError, helpText, loadConfig, type Config } from "./config.ts";
import { createDatabaseGuard } from "./db/database-guard.ts";
import { migrate } from "./db/migrations.ts";
import { openDatabase } from "./db/open.ts";
import { databaseProblem } from "./db/problems.ts";
import { checkReadiness } from "./db/readiness.ts";
import { refreshRollup } from "./db/refresh.ts";
import type { Database } from "./db/database.ts";
import { progressLines } from "./progress.ts";
import { createAdmission } from "./http/admission.ts";
import { createApp } from "./http/app.ts";
import { createHandler } from "./http/handler.ts";
import { createBufferBudget } from "./http/read-ahead.ts";
import { createRateLimiter } from "./http/rate-limit.ts";
import { listen } from "./http/server.ts";
import { runLoadCsv } from "./load/command.ts";
import { createLogger, errorFields, type Logger } from "./log.ts";
import { createServiceMetrics } from "./metrics/service-metrics.ts";
import { logKeyWarnings, reloadOnSighup, tlsDigest } from "./reload.ts";
import { installPath, systemdUnit, UNIT_KINDS, type UnitKind } from "./systemd-unit.ts";
import { COMMIT, VERSION } from "./version.ts";

const COMMANDS = ["serve", "migrate", "refresh", "hash-key", "load-csv", "systemd-unit"] as const;
const READINESS_TIMEOUT_MS = 2000;
type Command = (typeof COMMANDS)[number];

async function serve(config: Config, logger: Logger): Promise<void> {
  let keys: ApiKeyRing = loadKeyRing(config);
  const db = await openDatabase(config, true);
  const metrics = config.metricsEnabled ? createServiceMetrics({ version: VERSION, commit: COMMIT }) : undefined;
  const guard = createDatabaseGuard(logger);
  const readiness = () => checkReadiness(db.readinessSql, READINESS_TIMEOUT_MS, guard);
  const app = createApp({
    keys: () => keys,
    sql: db.sql,
    logger,
    maxRangeDays: config.maxRangeDays,
    firstBatchTimeoutMs: config.statementTimeoutMs + 1000,
    readiness,
    guard,
    demoData: db.servesDemoData,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    admission: createAdmission({
      maxConcurrent: db.sql.options.max, // a read holds a connection while its body streams
      maxQueued: config.requestQueueMax,
      queueTimeoutMs: config.requestQueueTimeoutMs,
      requestTimeoutMs: config.requestTimeoutMs,
    }),
    ...(config.rateLimitPerMinute > 0 ? { rateLimiter: createRateLimiter(config.rateLimitPerMinute) } : {}),
    metrics,
  });
  // From here on nothing stops the process but a signal: a failure that escaped a request's
  // own handling is logged with its cause and counted, and the service keeps serving.
  const survive = (kind: string) => (err: unknown) => {
    logger.error(`${kind}, the service keeps running`, errorFields(err));
    metrics?.unhandledError();
  };
  process.removeAllListeners("uncaughtException").on("uncaughtException", survive("uncaught exception"));
  process.removeAllListeners("unhandledRejection").on("unhandledRejection", survive("unhandled rejection"));
  const tlsServed = tlsDigest(config);
  // Every answer of a demo says so, so that made-up costs are never mistaken for real ones.
  const headers = db.servesDemoData ? { "x-demo-data": "true" } : undefined;
  const server = listen(
    config,
    createHandler(app, logger, {
      observe: metrics?.observer(app.routes),
      headers,
      readAhead: createBufferBudget(config.responseBufferMb * 2 ** 20),
      requestTimeoutMs: config.requestTimeoutMs,
    }),
  );
  // Signal handlers before the "listening" line: a signal sent as soon as it appears must not kill the process.
  process.on("SIGHUP", () => reloadOnSighup({ config, logger, tlsServed, keys: () => keys, setKeys: (next) => (keys = next) }));

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("shutting down", { signal, in_flight: server.pendingRequests });
    const drained = server.stop(false).then(() => true);
    const timedOut = Bun.sleep(config.shutdownTimeoutMs).then(() => false);
    if (!(await Promise.race([drained, timedOut]))) {
      logger.warn("shutdown timeout reached, closing the remaining connections", { in_flight: server.pendingRequests });
      await server.stop(true);
    }
    await db.close(5).catch(() => {});
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  process.on("SIGINT", () => void shutdown("SIGINT"));

  logger.info("listening", {
    version: VERSION,
    commit: COMMIT,
    url: server.url.toString(),
    database: db.description,
    api_keys: keys.size,
    // Time since the process started; for the embedded database, where its start went.
    startup_ms: Math.round(performance.now()),
    ...(db.startTimings ? { database_start_ms: db.startTimings } : {}),
  });
  if (db.servesDemoData) {
    logger.warn("serving embedded demo data", {
      where: "in memory, gone at exit",
      hint: "set DATABASE_URL to serve your PostgreSQL, or --data-dir with load-csv to keep your own data",
    });
  }
  logKeyWarnings(logger, keys);
  // One line on whether requests will be answered; it keeps serving (and retrying) either way.
  // (Not once shutting down: closing the pool would fail the check for no reason of the database's.)
  const ready = await readiness();
  if (stopping) return;
  if (ready.ready) logger.info("database ready", { database: db.description });
  else logger.error("database not ready", { problem: ready.problem.code, cause: ready.problem.cause, fix: ready.problem.fix });
}

/** Folds the change log in, with progress lines; the report for the log. */
async function refreshWithProgress(command: string, sql: Database["sql"], options: { rebuild?: boolean } = {}) {
  const lines = progressLines(command);
  const steps = { totals: "adding up daily rows into totals to date", answers: "rendering the answers of calendar periods" } as const;
  return refreshRollup(sql, { ...options, onProgress: (p) => lines.report(steps[p.step], p.done, p.total) });
}

async function runMigrate(config: Config, logger: Logger): Promise<void> {
  const db = await openDatabase(config, false);
  try {
    const applied = await migrate(db.sql);
    logger.info("migrations applied", { applied, database: db.description });
    // What the migrations need built, built now, while the service may already answer (exactly).
    const refreshed = await refreshWithProgress("migrate", db.sql);
    logger.info("refreshed", { ...refreshed });
  } catch (err) {
    // A database that cannot be migrated at all: its cause and the fix, in one line.
    const found = databaseProblem(err);
    if (found) throw new Error(`cannot migrate: ${found.cause}; ${found.fix}`);
    throw err;
  } finally {
    await db.close(5);
  }
}

async function runRefresh(config: Config, rebuild: boolean, logger: Logger): Promise<void> {
  const db = await openDatabase(config, false);
  try {
    const refreshed = await refreshWithProgress("refresh", db.sql, { rebuild });
    logger.info("refreshed", { ...refreshed, database: db.description });
  } catch (err) {
    const found = databaseProblem(err);
    if (found) throw new Error(`cannot refresh: ${found.cause}; ${found.fix}`);
    throw err;
  } finally {
    await db.close(5);
  }
}

async function hashKey(): Promise<void> {
  const input = (await Bun.stdin.text()).replace(/\r?\n$/, "").trim();
  if (!input) throw new ConfigError("hash-key: no key on stdin (usage: printf %s \"$KEY\" | product-cost-export hash-key)");
  process.stdout.write(`sha256:${sha256Hex(input)}\n`);
}

async function main(argv: string[]): Promise<void> {
  if (argv.includes("--help") || argv.includes("-h")) {
    process.stdout.write(helpText() + "\n");
    return;
  }
  if (argv.includes("--version")) {
    process.stdout.write(`product-cost-export ${VERSION} (commit ${COMMIT})\n`);
    return;
  }
  const first = argv[0];
  const command: Command = first && !first.startsWith("-") ? (first as Command) : "serve";
  if (!COMMANDS.includes(command)) throw new ConfigError(`unknown command ${JSON.stringify(first)} (see --help)`);
  const flags = first && !first.startsWith("-") ? argv.slice(1) : argv;
  if (command === "hash-key") return hashKey();
  if (command === "systemd-unit") {
    const [kind = "service", ...extra] = flags;
    if (kind.startsWith("-") || extra.length) throw new ConfigError("systemd-unit takes no flags: settings go in /etc/product-cost-export/env");
    if (!(UNIT_KINDS as readonly string[]).includes(kind)) throw new ConfigError(`systemd-unit prints one of: ${UNIT_KINDS.join(", ")} (not ${JSON.stringify(kind)})`);
    process.stdout.write(systemdUnit(kind as UnitKind, installPath(process.execPath)));
    return;
  }
  if (command === "load-csv") {
    return runLoadCsv(flags, process.env, (c) => createLogger({ level: c.logLevel, format: c.logFormat }));
  }

  // `refresh --rebuild` is the one command flag that is not a setting.
  const rebuild = command === "refresh" && flags.includes("--rebuild");
  const config = loadConfig(command === "refresh" ? flags.filter((f) => f !== "--rebuild") : flags, process.env);
  const logger = createLogger({ level: config.logLevel, format: config.logFormat });
  // Last resort while starting (and for migrate): a failure nothing else caught is logged with
  // its cause (never to a client), then the process exits 1. Once serving, serve() replaces
  // these with handlers that log and keep running.
  const fatal = (kind: string) => (err: unknown) => {
    logger.error(`fatal: ${kind}`, errorFields(err));
    process.exit(1);
  };
  process.on("uncaughtException", fatal("uncaught exception"));
  process.on("unhandledRejection", fatal("unhandled rejection"));
  if (command === "migrate") {
    checkMigrateDatabase(config);
    return runMigrate(config, logger);
  }
  if (command === "refresh") {
    checkMigrateDatabase(config, "refresh");
    return runRefresh(config, rebuild, logger);
  }
  checkServeDatabase(config, Boolean((process.env.INVOCATION_ID || process.env.NOTIFY_SOCKET) && !process.stdin.isTTY));
  return serve(config, logger);
}

main(process.argv.slice(2)).catch((err) => {
  if (err instanceof ConfigError) {
    process.stderr.write(`product-cost-export: ${err.message}\n`);
    process.exit(2);
  }
  process.stderr.write(`product-cost-export: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
