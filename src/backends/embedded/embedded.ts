// The embedded PostgreSQL, seen from the main thread: starts the worker, waits until it
// serves the PostgreSQL protocol on a private Unix socket, and hands back the same kind
// of postgres.js pool the service uses for an external server. One data path.
//
// PGlite differs from a server in three ways this module absorbs:
// - it is one session: several client connections are multiplexed onto it, so the pool
//   has one connection (more would only queue inside the worker);
// - it ignores startup parameters, so read-only mode and the serving planner settings are
//   set with SET once open (they then hold for every connection: one session);
// - it enforces no statement_timeout and ignores cancel requests: the service's own
//   deadline answers 503 in time, while the statement finishes in the worker.

import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ConfigError } from "../../settings/config.ts";
import { createPool, SERVING_SETTINGS, type Sql } from "../../database/client.ts";
import type { Database } from "../database.ts";
import { DATABASE_DIR, type Seed, type StartMessage, type WorkerMessage } from "./protocol.ts";

export interface EmbeddedOptions {
  /** Persistent directory, or undefined for an in-memory database. */
  dataDir: string | undefined;
  /** Start a new database with the demo data (an existing data dir keeps what it has). */
  demoData: boolean;
  /** Serving: read-only sessions. `migrate`/`load-csv`: writable. */
  readOnly: boolean;
  connectTimeoutMs: number;
}

export interface EmbeddedDatabase extends Database {
  /** True when this start created the database (from a seed) rather than reopening it. */
  created: boolean;
}

const START_TIMEOUT_MS = 60_000;

// From source the worker sits beside this file. In the executable every entrypoint lives in
// Bun's embedded file system under its path relative to src/ (build.sh compiles
// src/main.ts and src/backends/embedded/worker.ts together).
const WORKER_URL = import.meta.url.includes("/$bunfs/")
  ? "/$bunfs/root/backends/embedded/worker.js"
  : new URL("./worker.ts", import.meta.url).href;

/** One process per data dir: a second one would corrupt it. A stale lock (dead pid) is taken over. */
function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true });
  const lock = join(dir, "lock");
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lock, "wx");
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") {
        throw new ConfigError(`cannot use data dir ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const pid = Number(readFileSync(lock, "utf8").trim());
      if (pid && processAlive(pid)) {
        throw new ConfigError(`data dir ${dir} is in use by process ${pid}`);
      }
      unlinkSync(lock);
    }
  }
  throw new ConfigError(`cannot lock data dir ${dir}`);
}

/** Whether `dataDir` holds a database yet (a first start makes it there). */
export function holdsDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, DATABASE_DIR));
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function startWorker(message: StartMessage): Promise<{ worker: Worker; ready: Extract<WorkerMessage, { type: "ready" }> }> {
  const worker = new Worker(WORKER_URL);
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      worker.terminate();
      reject(new Error(`the embedded database did not start within ${START_TIMEOUT_MS / 1000} s`));
    }, START_TIMEOUT_MS);
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      if (event.data.type === "ready") {
        clearTimeout(timer);
        resolvePromise({ worker, ready: event.data });
      } else if (event.data.type === "error") {
        clearTimeout(timer);
        worker.terminate();
        reject(new Error(`the embedded database failed to start: ${event.data.message}`));
      }
    };
    worker.onerror = (event) => {
      clearTimeout(timer);
      reject(new Error(`the embedded database failed to start: ${event.message}`));
    };
    worker.postMessage(message);
  });
}

function stopWorker(worker: Worker, timeoutMs: number): Promise<void> {
  return new Promise((resolvePromise) => {
    const timer = setTimeout(() => {
      worker.terminate();
      resolvePromise();
    }, timeoutMs);
    worker.onmessage = (event: MessageEvent<WorkerMessage>) => {
      if (event.data.type === "stopped" || event.data.type === "error") {
        clearTimeout(timer);
        worker.terminate();
        resolvePromise();
      }
    };
    worker.postMessage({ type: "stop" });
  });
}

export async function openEmbedded(options: EmbeddedOptions): Promise<EmbeddedDatabase> {
  const dataDir = options.dataDir === undefined ? undefined : resolve(options.dataDir);
  const unlock = dataDir ? lockDataDir(dataDir) : () => {};
  const socketDir = mkdtempSync(join(tmpdir(), "pce-embedded-"));
  const socketPath = join(socketDir, ".s.PGSQL.5432");
  const seed: Seed = options.demoData ? "demo" : "empty";
  const startedAt = performance.now();

  let worker: Worker;
  let ready: Extract<WorkerMessage, { type: "ready" }>;
  try {
    ({ worker, ready } = await startWorker({ type: "start", dataDir, seed, socketPath, maxConnections: 3 }));
  } catch (err) {
    unlock();
    rmSync(socketDir, { recursive: true, force: true });
    throw err;
  }

  const sql: Sql = createPool({
    path: socketPath,
    max: 1,
    connectTimeoutMs: options.connectTimeoutMs,
    statementTimeoutMs: 0,
    readOnly: false,
    applicationName: "product-cost-export",
  });
  const close = async (timeoutSeconds = 5) => {
    await sql.end({ timeout: timeoutSeconds }).catch(() => {});
    await stopWorker(worker, 10_000);
    rmSync(socketDir, { recursive: true, force: true });
    unlock();
  };

  // A new database starts from a seed of this build: migrated and refreshed. One a data dir
  // kept from an older build is opened as it is (only `migrate` changes it: backends/open.ts).
  let demo: boolean;
  try {
    if (options.readOnly) {
      await sql`set default_transaction_read_only = on`;
      for (const [name, value] of Object.entries(SERVING_SETTINGS)) await sql`select set_config(${name}, ${value}, false)`;
    }
    // The demo's own mark (sql/demo/demo_data.sql): a data dir made with --demo-data keeps
    // serving made-up costs after a restart without it, and must keep saying so.
    const [mark] = await sql<{ demo: boolean }[]>`select to_regclass('product_cost_export_demo_data') is not null as demo`;
    demo = mark!.demo;
  } catch (err) {
    await close();
    throw err;
  }

  const where = dataDir ? `data dir ${dataDir}` : "memory";
  const what = ready.created ? (demo ? "new database with demo data" : "new empty database") : demo ? "existing database with demo data" : "existing database";
  return {
    sql,
    readinessSql: sql, // one session, whatever the pool
    description: `embedded PostgreSQL (PGlite) in ${where}, ${what}`,
    servesDemoData: demo,
    close,
    created: ready.created,
    startTimings: { ...ready.timings, total_ms: Math.round(performance.now() - startedAt) },
  };
}
