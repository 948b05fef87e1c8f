// The databases the database-backed tests run against: always the embedded one (so the
// suite passes on a machine with no PostgreSQL server) and, when TEST_DATABASE_URL is set
// (CI sets it), also a real PostgreSQL. Each backend gives a writable pool to load
// fixtures and a pool configured like the service's own.

import type { Sql } from "../../src/db/client.ts";
import { servicePool, testDatabase } from "./database.ts";
import { embeddedDatabase } from "./embedded.ts";

export interface BackendHandle {
  admin: Sql;
  service: Sql;
  close(): Promise<void>;
}

export interface Backend {
  name: string;
  open(options?: { statementTimeoutMs?: number; max?: number }): Promise<BackendHandle>;
}

/** Is a real PostgreSQL server configured for this run? */
export const HAS_POSTGRESQL = Boolean(process.env.TEST_DATABASE_URL);

const postgresql: Backend = {
  name: "postgresql",
  async open(options = {}) {
    const db = await testDatabase();
    const service = await servicePool(options);
    return { admin: db.admin, service, close: () => service.end({ timeout: 5 }) };
  },
};

// PGlite is one session behind its socket: a read-only SET would also stop the fixture
// loads, so here both pools are the same writable one. Read-only serving on the embedded
// database is tested on its own (tests/db/embedded.test.ts).
const embedded: Backend = {
  name: "embedded",
  async open() {
    const db = await embeddedDatabase();
    return { admin: db.sql, service: db.sql, close: async () => {} };
  },
};

export function backends(): Backend[] {
  return HAS_POSTGRESQL ? [embedded, postgresql] : [embedded];
}
