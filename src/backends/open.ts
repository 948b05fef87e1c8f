// Opens the database the service reads: an external PostgreSQL (DATABASE_URL) or, when
// none is configured, the embedded one. Either way the rest of the service sees one
// postgres.js pool, so there is one data path.

import { ConfigError, type Config } from "../settings/config.ts";
import type { Logger } from "../ops/log.ts";
import { createPool } from "../database/client.ts";
import { maskDatabaseUrl, parseDatabaseUrl } from "../settings/database-url.ts";
import type { Database } from "./database.ts";
import { openEmbedded } from "./embedded/embedded.ts";
import { pendingMigrations } from "../rollup/migrations.ts";
import { askHosts } from "../database/silence.ts";

/**
 * An external PostgreSQL. `max` sessions in all: when serving with two or more, one is the
 * readiness checks' own, so that /readyz does not queue behind reads that fill the pool.
 */
export function openExternal(config: Config, options: { readOnly: boolean; max: number; logger?: Logger }): Database {
  const url = config.databaseUrl!;
  const pool = (max: number) =>
    createPool({
      url,
      max,
      connectTimeoutMs: config.dbConnectTimeoutMs,
      statementTimeoutMs: config.statementTimeoutMs,
      readOnly: options.readOnly,
      applicationName: "product-cost-export",
      logger: options.logger,
    });
  const ownReadiness = options.readOnly && options.max >= 2;
  const sql = pool(ownReadiness ? options.max - 1 : options.max);
  const readinessSql = ownReadiness ? pool(1) : sql;
  const { hosts, ports } = parseDatabaseUrl(url);
  return {
    sql,
    readinessSql,
    ...(hosts[0]!.startsWith("/") ? {} : { ask: askHosts(hosts, ports) }),
    description: `PostgreSQL at ${maskDatabaseUrl(url)}`,
    servesDemoData: false,
    close: async (timeout = 5) => {
      await Promise.all([sql.end({ timeout }), readinessSql === sql ? undefined : readinessSql.end({ timeout })]);
    },
  };
}

/**
 * The database for a command: DATABASE_URL when set, else the embedded one (in memory with
 * the demo data by default; in DATA_DIR without it unless DEMO_DATA says so).
 * Serving uses read-only sessions; migrate and load-csv write. A data dir an older build
 * left is refused (exit 2) unless `migrating`: only `migrate` changes its schema.
 */
export async function openDatabase(config: Config, readOnly: boolean, logger?: Logger, options: { migrating?: boolean } = {}): Promise<Database> {
  // Writing commands (migrate, refresh, load-csv) need two sessions: the refresh renders two answers at once.
  if (config.databaseUrl) return openExternal(config, { readOnly, max: readOnly ? config.dbPoolMax : 2, logger });
  const db = await openEmbedded({
    dataDir: config.dataDir,
    demoData: config.demoData ?? config.dataDir === undefined,
    readOnly,
    connectTimeoutMs: config.dbConnectTimeoutMs,
  });
  // A new database is made from this build's seed, already migrated.
  if (options.migrating || db.created) return db;
  const pending = await pendingMigrations(db.sql).catch((err) => db.close().then(() => Promise.reject(err)));
  if (pending.length === 0) return db;
  await db.close();
  const dir = config.dataDir;
  throw new ConfigError(`data dir ${dir} was made by an older build (migrations ${pending.join(", ")} not applied): run product-cost-export migrate --data-dir ${dir} first`);
}
