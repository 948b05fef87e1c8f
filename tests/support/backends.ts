// The databases the database-backed tests run against. Each backend gives a writable pool
// (to load fixtures) and a read-only pool configured like the service's own.

import type { Sql } from "../../src/db/client.ts";
import { servicePool, testDatabase } from "./database.ts";

export interface BackendHandle {
  admin: Sql;
  service: Sql;
  close(): Promise<void>;
}

export interface Backend {
  name: string;
  open(options?: { statementTimeoutMs?: number; max?: number }): Promise<BackendHandle>;
}

const postgresql: Backend = {
  name: "postgresql",
  async open(options = {}) {
    const db = await testDatabase();
    const service = await servicePool(options);
    return { admin: db.admin, service, close: () => service.end({ timeout: 5 }) };
  },
};

export function backends(): Backend[] {
  return [postgresql];
}
