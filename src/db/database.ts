// What the rest of the service needs from a database, whichever backend serves it.

import type { Sql } from "./client.ts";

export interface Database {
  /** The pool requests read through. */
  sql: Sql;
  /**
   * The pool readiness checks use: its own single session when DB_POOL_MAX allows, so a pool
   * full of reads does not make /readyz fail; on the embedded database (one session) `sql`.
   */
  readinessSql: Sql;
  /** For the startup log: where the data comes from, without credentials. */
  description: string;
  /** True when this start created an embedded database holding the demo dataset. */
  servesDemoData: boolean;
  /** Where the start-up time went (embedded database only), for the startup log. */
  startTimings?: Record<string, number>;
  close(timeoutSeconds?: number): Promise<void>;
}
