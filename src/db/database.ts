// What the rest of the service needs from a database, whichever backend serves it.

import type { Sql } from "./client.ts";
import { pendingMigrations } from "./migrations.ts";

export interface Database {
  sql: Sql;
  /** For the startup log: where the data comes from, without credentials. */
  description: string;
  /** True when this start created an embedded database holding the demo dataset. */
  servesDemoData: boolean;
  /** Where the start-up time went (embedded database only), for the startup log. */
  startTimings?: Record<string, number>;
  /** Is the database reachable and migrated? Bounded by `timeoutMs`. */
  readiness(timeoutMs: number): Promise<{ ready: boolean; reason?: string }>;
  close(timeoutSeconds?: number): Promise<void>;
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

