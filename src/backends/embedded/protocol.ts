// Messages between the main thread and the embedded-database worker.

export type Seed = "demo" | "empty";

/** Where in a data dir the database lives (a first start writes `<it>.init`, then renames it). */
export const DATABASE_DIR = "pgdata";

export interface StartMessage {
  type: "start";
  /** Directory holding the database (persistent), or undefined for in memory. */
  dataDir: string | undefined;
  /** What a new database starts from: the migrated schema with or without the demo data. */
  seed: Seed;
  /** Unix socket path the worker serves the PostgreSQL protocol on. */
  socketPath: string;
  maxConnections: number;
}

export type WorkerMessage =
  | { type: "ready"; created: boolean; timings: Record<string, number> }
  | { type: "error"; message: string }
  | { type: "stopped" };
