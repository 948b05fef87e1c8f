// The databases the database-backed tests run against: the embedded one and a real
// PostgreSQL (support/postgres.ts: TEST_DATABASE_URL, the local server, or a throwaway
// cluster; reported as skipped where PostgreSQL is not installed). Each backend gives a
// writable pool to load fixtures and a pool configured like the service's own.

import { describe } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { servicePool, testDatabase } from "./database.ts";
import { embeddedDatabase, readWrite } from "./embedded.ts";
import { POSTGRES } from "./postgres.ts";

export interface BackendHandle {
  admin: Sql;
  service: Sql;
  close(): Promise<void>;
}

export interface Backend {
  name: string;
  open(options?: { statementTimeoutMs?: number; max?: number }): Promise<BackendHandle>;
}

/** Is there a real PostgreSQL server for this run? */
export const HAS_POSTGRESQL = Boolean(POSTGRES);

const postgresql: Backend = {
  name: "postgresql",
  async open(options = {}) {
    const db = await testDatabase();
    const service = await servicePool(options);
    return { admin: db.admin, service, close: () => service.end({ timeout: 5 }) };
  },
};

// PGlite is one session behind its socket, read-only by default as when serving: the
// service reads through it as is, fixtures are written in read-write transactions.
const embedded: Backend = {
  name: "embedded",
  async open() {
    const db = await embeddedDatabase();
    return { admin: readWrite(db.sql), service: db.sql, close: async () => {} };
  },
};

export function backends(): Backend[] {
  return [embedded, postgresql];
}

/**
 * One describe block per backend, named with `$name`; the PostgreSQL one is reported as
 * skipped (never left out) where there is no PostgreSQL.
 */
export function describeBackends(name: string, fn: (backend: Backend) => void): void {
  for (const backend of backends()) {
    const title = name.replace("$name", backend.name);
    if (backend === postgresql && !HAS_POSTGRESQL) describe.skip(`${title} (skipped: no PostgreSQL)`, () => fn(backend));
    else describe(title, () => fn(backend));
  }
}
