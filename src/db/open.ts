// Opens the database the service reads: an external PostgreSQL (DATABASE_URL) or, when
// none is configured, the embedded one. Either way the rest of the service sees one
// postgres.js pool, so there is one data path.

import type { Config } from "../config.ts";
import { createPool, type Sql } from "./client.ts";
import { pendingMigrations } from "./migrations.ts";

export interface Database {
  sql: Sql;
  /** For the startup log: where the data comes from, without credentials. */
  description: string;
  /** Is the database reachable and migrated? Bounded by `timeoutMs`. */
  readiness(timeoutMs: number): Promise<{ ready: boolean; reason?: string }>;
  close(timeoutSeconds?: number): Promise<void>;
}

/** The URL without its password, for logs. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable url)";
  }
}

export function readinessOf(sql: Sql) {
  return async (timeoutMs: number): Promise<{ ready: boolean; reason?: string }> => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<{ ready: boolean; reason: string }>((resolve) => {
      timer = setTimeout(() => resolve({ ready: false, reason: "DATABASE_UNAVAILABLE" }), timeoutMs);
    });
    const check = pendingMigrations(sql).then(
      (pending) => (pending.length ? { ready: false, reason: "MIGRATIONS_PENDING" } : { ready: true }),
      () => ({ ready: false, reason: "DATABASE_UNAVAILABLE" }),
    );
    try {
      return await Promise.race([check, timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
}

export function openExternal(config: Config, options: { readOnly: boolean; max?: number }): Database {
  const url = config.databaseUrl!;
  const sql = createPool({
    url,
    max: options.max ?? config.dbPoolMax,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    statementTimeoutMs: config.statementTimeoutMs,
    readOnly: options.readOnly,
    applicationName: "product-cost-export",
  });
  return {
    sql,
    description: `PostgreSQL at ${redactUrl(url)}`,
    readiness: readinessOf(sql),
    close: (timeout = 5) => sql.end({ timeout }),
  };
}
