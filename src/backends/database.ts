// What the rest of the service needs from a database, whichever backend serves it.

import type { Sql } from "../database/client.ts";
import type { AskDatabase } from "../database/silence.ts";

export interface Database {
  /** The pool requests read through. */
  sql: Sql;
  /**
   * The pool readiness checks use: its own single session when DB_POOL_MAX allows, so a pool
   * full of reads does not make /readyz fail; on the embedded database (one session) `sql`.
   */
  readinessSql: Sql;
  /**
   * Asks the server on a new connection whether it answers at all, to tell a silent database
   * from a slow one (silence.ts). None on a Unix socket (the embedded database's, or a local
   * server's): nothing between can go silent there, and the embedded database's worker does
   * not answer while it runs a statement.
   */
  ask?: AskDatabase;
  /** For the startup log: where the data comes from, without credentials. */
  description: string;
  /** True when this start created an embedded database holding the demo dataset. */
  servesDemoData: boolean;
  /** Where the start-up time went (embedded database only), for the startup log. */
  startTimings?: Record<string, number>;
  close(timeoutSeconds?: number): Promise<void>;
}
