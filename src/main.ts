// Entry point: argv → command (the commands and their flags: cli/commands.ts). The only
// module that reads argv, listens or exits.

import { loadKeyRing, type ApiKeyRing } from "./auth/api-keys.ts";
import { commandHelp, commandNamed, overviewHelp, type CommandSpec } from "./cli/commands.ts";
import { checkLabel, keyFileLine, keyToHash, newApiKey } from "./cli/keys.ts";
import { SQL_SCRIPTS } from "./cli/print-sql.ts";
import { stageFiles } from "./cli/stage-files.ts";
import { checkMigrateDatabase, checkServeDatabase, ConfigError, parseArgs, readCommandLine, SETTINGS, type Config } from "./config.ts";
import { createDatabaseGuard } from "./db/database-guard.ts";
import { migrate, plannedMigrations } from "./db/migrations.ts";
import { openDatabase } from "./db/open.ts";
import { databaseProblem } from "./db/problems.ts";
import { checkReadiness } from "./db/readiness.ts";
import { readRollupLag } from "./db/rollup-lag.ts";
import type { Database } from "./db/database.ts";
import { heartbeat, indexBuildDetail, type IndexBuildProgress } from "./progress.ts";
import { refreshWithProgress } from "./db/refresh-progress.ts";
import { refreshProblem } from "./db/refresh.ts";
import { startBackgroundRefresh } from "./db/background-refresh.ts";
import { classify, exitOnUncaught } from "./failures.ts";
import { createAdmission } from "./http/admission.ts";
import { createApp } from "./http/app.ts";
import { clientAddress } from "./http/client-address.ts";
import { createHandler } from "./http/handler.ts";
import { createBufferBudget } from "./http/read-ahead.ts";
import { createRateLimiter } from "./http/rate-limit.ts";
import { listen } from "./http/server.ts";
import { runLoadCsv } from "./load/command.ts";
import { createLogger, errorFields, stdoutIsJournal, type Logger } from "./log.ts";
import { createServiceMetrics } from "./metrics/service-metrics.ts";
import { logKeyWarnings, reloadOnSighup, tlsDigest } from "./reload.ts";
import { systemdNotifier, type Notifier } from "./systemd-notify.ts";
import { DEFAULT_INSTALL_PATH, systemdUnit, UNIT_KINDS, type UnitKind } from "./systemd-unit.ts";
import { COMMIT, VERSION } from "./version.ts";

const READINESS_TIMEOUT_MS = 2000;

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

async function serve(config: Config, logger: Logger): Promise<void> {
  const tell = stateTeller(logger);
  let keys: ApiKeyRing = loadKeyRing(config);
  const db = await openDatabase(config, true, logger);
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
    rollupLag: () => readRollupLag(db.readinessSql, READINESS_TIMEOUT_MS),
    guard,
    demoData: db.servesDemoData,
    docsEnabled: config.docsEnabled,
    build: { version: VERSION, commit: COMMIT },
    connectTimeoutMs: config.dbConnectTimeoutMs,
    admission: createAdmission({
      maxConcurrent: db.sql.options.max, // a read holds a connection while its body streams
      maxQueued: config.requestQueueMax,
      queueTimeoutMs: config.requestQueueTimeoutMs,
    }),
    readAhead: createBufferBudget(config.responseBufferMb * 2 ** 20),
    ...(config.rateLimitPerMinute > 0 ? { rateLimiter: createRateLimiter(config.rateLimitPerMinute) } : {}),
    metrics,
  });
  const tlsServed = tlsDigest(config);
  // Every answer of a demo says so, so that made-up costs are never mistaken for real ones.
  const headers = db.servesDemoData ? { "x-demo-data": "true" } : undefined;
  const server = listen(
    config,
    createHandler(app, logger, {
      observe: metrics?.observer(app.routes),
      headers,
      requestTimeoutMs: config.requestTimeoutMs,
      clientAddress: clientAddress(config.trustedProxies),
    }),
    logger,
  );
  // Signal handlers before the "listening" line: a signal sent as soon as it appears must not kill the process.
  process.on("SIGHUP", () => {
    // RELOADING with the monotonic time of its start (systemd 253 asks for it), READY when done.
    tell(`RELOADING=1\nMONOTONIC_USEC=${process.hrtime.bigint() / 1000n}`);
    reloadOnSighup({ config, logger, tlsServed, keys: () => keys, setKeys: (next) => (keys = next) });
    tell("READY=1");
  });
  const backgroundRefresh = config.refreshDatabaseUrl
    ? startBackgroundRefresh({ url: config.refreshDatabaseUrl, intervalMs: config.refreshIntervalS * 1000, connectTimeoutMs: config.dbConnectTimeoutMs, logger })
    : undefined;

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    tell("STOPPING=1");
    logger.info("shutting down", { signal, in_flight: server.pendingRequests });
    const drained = server.stop(false).then(() => true);
    const timedOut = Bun.sleep(config.shutdownTimeoutMs).then(() => false);
    if (!(await Promise.race([drained, timedOut]))) {
      logger.warn("shutdown timeout reached, closing the remaining connections", { in_flight: server.pendingRequests });
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

/**
 * What an index build of the migration (on the pool's other session) has done, from
 * PostgreSQL's own progress view: index builds are the long steps on a large database.
 */
async function indexBuildProgress(sql: Database["sql"]): Promise<string | undefined> {
  const [p] = await sql<IndexBuildProgress[]>`
    select command, phase, blocks_done::float8 as "blocksDone", blocks_total::float8 as "blocksTotal",
           tuples_done::float8 as "tuplesDone", tuples_total::float8 as "tuplesTotal"
    from pg_stat_progress_create_index where datname = current_database()`;
  return p ? indexBuildDetail(p) : undefined;
}

async function runMigrate(config: Config, logger: Logger, options: { dryRun: boolean }): Promise<void> {
  // An embedded data dir is migrated when opened, unless this is only a look.
  const db = await openDatabase(config, false, logger, { migrate: !options.dryRun });
  try {
    if (options.dryRun) {
      const steps = await plannedMigrations(db.sql);
      for (const step of steps) logger.info("pending migration", { ...step });
      logger.info(steps.length ? "migrate would apply these steps; nothing was changed" : "nothing to migrate", { pending: steps.length, database: db.description });
      return;
    }
    const started = performance.now();
    let beat: (() => void) | undefined;
    const applied = await migrate(db.sql, undefined, {
      onStepStart: (step) => (beat = heartbeat("migrate", `${step.version} ${step.name}`, { probe: () => indexBuildProgress(db.sql) })),
      onStepDone: (step, ms) => {
        beat?.();
        logger.info("migration step done", { ...step, duration_ms: Math.round(ms) });
      },
    });
    logger.info("migrations applied", { applied, duration_ms: Math.round(performance.now() - started), database: db.description });
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
    const found = refreshProblem(err);
    if (found) throw new Error(`cannot refresh: ${found.cause}; ${found.fix}`);
    throw err;
  } finally {
    await db.close(5);
  }
}

/** Reads a command line that takes no settings: only the command's own flags and `maxPositional` arguments. */
function plainArgs(command: CommandSpec, args: readonly string[], maxPositional: number) {
  const problems: string[] = [];
  const parsed = parseArgs(args, command.own, problems, (name) =>
    SETTINGS.some((s) => s.flag === name)
      ? `${command.name} reads no settings (--${name} is a setting of ${SETTINGS.find((s) => s.flag === name)!.commands.join(", ")})`
      : `unknown flag --${name} (see ${command.name} --help)`,
  );
  for (const extra of parsed.positional.slice(maxPositional)) problems.push(`unexpected argument ${JSON.stringify(extra)} (see ${command.name} --help)`);
  if (problems.length) throw new ConfigError(problems.join("; "));
  return parsed;
}

function printSystemdUnit(command: CommandSpec, args: readonly string[]): void {
  const { values, positional } = plainArgs(command, args, 1);
  const kind = positional[0] ?? "service";
  if (!(UNIT_KINDS as readonly string[]).includes(kind)) throw new ConfigError(`systemd-unit prints one of: ${UNIT_KINDS.join(", ")} (not ${JSON.stringify(kind)})`);
  const execPath = values.get("exec-path") ?? DEFAULT_INSTALL_PATH;
  if (!execPath.startsWith("/") || /\s/.test(execPath)) throw new ConfigError(`systemd-unit: --exec-path must be an absolute path without spaces, got ${JSON.stringify(execPath)}`);
  // ProtectHome=yes hides /root and /home from the service: an executable there cannot start.
  for (const path of new Set([execPath, process.execPath])) {
    if (/^\/(root|home)(\/|$)/.test(path)) {
      process.stderr.write(`product-cost-export: warning: ${path} is under /root or /home, which the unit hides (ProtectHome=yes): install the executable as ${DEFAULT_INSTALL_PATH} and use that path\n`);
    }
  }
  process.stdout.write(systemdUnit(kind as UnitKind, execPath));
}

function printSql(command: CommandSpec, args: readonly string[]): void {
  const { positional } = plainArgs(command, args, 1);
  const script = positional[0] ? SQL_SCRIPTS[positional[0]] : undefined;
  if (script === undefined) throw new ConfigError(`print-sql prints one of: ${Object.keys(SQL_SCRIPTS).join(", ")}`);
  process.stdout.write(script);
}

async function hashKey(command: CommandSpec, args: readonly string[]): Promise<void> {
  const { positional } = plainArgs(command, args, 1);
  process.stdout.write(keyFileLine(await keyToHash(positional[0])) + "\n");
}

function generateKey(command: CommandSpec, args: readonly string[]): void {
  const { values } = plainArgs(command, args, 0);
  const label = values.has("label") ? checkLabel(values.get("label")!) : undefined;
  const key = newApiKey();
  process.stdout.write(`${key}\n${keyFileLine(key, label)}\n`);
  if (process.stdout.isTTY) {
    process.stderr.write("The first line is the key, for the client (it is stored nowhere). Append the second line to the key file, then: systemctl reload product-cost-export\n");
  }
}

function printVersion(): void {
  process.stdout.write(`product-cost-export ${VERSION} (commit ${COMMIT})\n`);
}

async function main(argv: string[]): Promise<void> {
  const first = argv[0];
  if (first === "--version" || first === "-v") return printVersion();
  if (first === undefined || first.startsWith("-")) {
    if (first === "--help" || first === "-h") return void process.stdout.write(overviewHelp() + "\n");
  } else if (first === "help") {
    const about = argv[1] === undefined ? undefined : commandNamed(argv[1]);
    if (argv[1] !== undefined && !about) throw new ConfigError(`unknown command ${JSON.stringify(argv[1])} (see --help)`);
    return void process.stdout.write((about ? commandHelp(about) : overviewHelp()) + "\n");
  }
  const named = first && !first.startsWith("-");
  const command = commandNamed(named ? first : "serve");
  if (!command) throw new ConfigError(`unknown command ${JSON.stringify(first)} (see --help)`);
  const args = named ? argv.slice(1) : argv;
  // `<command> --help` anywhere on its line: that command's help, whatever else is there.
  if (args.includes("--help") || args.includes("-h")) return void process.stdout.write(commandHelp(command) + "\n");

  switch (command.name) {
    case "hash-key":
      return hashKey(command, args);
    case "generate-key":
      return generateKey(command, args);
    case "systemd-unit":
      return printSystemdUnit(command, args);
    case "print-sql":
      return printSql(command, args);
    case "stage-files": {
      const { values } = plainArgs(command, args, 0);
      const staged = stageFiles();
      process.stdout.write(`staged: ${staged.length ? staged.join(", ") : "nothing"}\n`);
      // The reload itself (no kill(1) needed: a minimal system may have none).
      const pid = values.get("reload");
      if (pid !== undefined) {
        if (!/^[1-9]\d*$/.test(pid)) throw new ConfigError(`stage-files --reload takes the service's main PID, got ${JSON.stringify(pid)}`);
        process.kill(Number(pid), "SIGHUP");
      }
      return;
    }
    case "version":
      plainArgs(command, args, 0);
      return printVersion();
    case "load-csv":
      return runLoadCsv(args, process.env, (c) => createLogger({ level: c.logLevel, format: c.logFormat, journald: stdoutIsJournal() }));
  }

  const line = readCommandLine(args, process.env, command.settings!, { own: command.own });
  const config = line.config;
  const logger = createLogger({ level: config.logLevel, format: config.logFormat, journald: stdoutIsJournal() });
  exitOnUncaught(logger);
  if (command.name === "migrate") {
    checkMigrateDatabase(config);
    return runMigrate(config, logger, { dryRun: line.own.get("dry-run") === "true" });
  }
  if (command.name === "refresh") {
    checkMigrateDatabase(config, "refresh");
    return runRefresh(config, line.own.get("rebuild") === "true", logger);
  }
  checkServeDatabase(config, Boolean((process.env.INVOCATION_ID || process.env.NOTIFY_SOCKET) && !process.stdin.isTTY));
  return serve(config, logger);
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`product-cost-export: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(classify(err).exitCode);
});
