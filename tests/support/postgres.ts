// The PostgreSQL server the database tests use, decided once per run:
//   1. TEST_DATABASE_URL, when set (CI sets it);
//   2. else the local server at 127.0.0.1:5432 (user postgres), when it answers;
//   3. else a throwaway cluster started for this run with PostgreSQL's own initdb (found in
//      PG_BIN_DIR or /usr/lib/postgresql/<version>/bin), stopped and removed at the end;
//   4. else none: PostgreSQL is not installed. The tests that need it are then registered
//      with describe.skip, so the run reports them as skipped, with their count, and says why.
// Nothing is ever left out silently.

import { describe } from "bun:test";
import postgres from "postgres";
import { createCluster, postgresBinDir, type Cluster } from "./cluster.ts";

export interface PostgresServer {
  /** postgres://user@host:port/database of a database the tests may create databases from. */
  url: string;
  origin: "TEST_DATABASE_URL" | "the local server" | "a throwaway cluster";
}

const LOCAL = "postgres://postgres@127.0.0.1:5432/test";

async function answers(url: string): Promise<boolean> {
  const sql = postgres(url, { max: 1, connect_timeout: 3, onnotice: () => {} });
  try {
    await sql`select 1`;
    return true;
  } catch {
    return false;
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

let throwaway: Cluster | undefined;

async function find(): Promise<PostgresServer | undefined> {
  if (process.env.TEST_DATABASE_URL) {
    // Set on purpose: it must answer, or the run fails loudly here.
    if (!(await answers(process.env.TEST_DATABASE_URL))) throw new Error(`TEST_DATABASE_URL does not answer: ${process.env.TEST_DATABASE_URL}`);
    return { url: process.env.TEST_DATABASE_URL, origin: "TEST_DATABASE_URL" };
  }
  if (await answers(LOCAL)) return { url: LOCAL, origin: "the local server" };
  if (!postgresBinDir()) return undefined;
  throwaway = await createCluster();
  throwaway.start();
  return { url: throwaway.url("postgres"), origin: "a throwaway cluster" };
}

export const POSTGRES: PostgresServer | undefined = await find();
console.log(
  POSTGRES
    ? `database tests: PostgreSQL from ${POSTGRES.origin}`
    : "database tests: no PostgreSQL (no TEST_DATABASE_URL, no server at 127.0.0.1:5432, no initdb): the tests that need it are skipped",
);

/** Stops the throwaway cluster, if this run started one. */
export function stopThrowawayPostgres(): void {
  throwaway?.destroy();
  throwaway = undefined;
}

const SKIPPED = " (skipped: no PostgreSQL, see README: Development and tests)";

/** A describe block that needs PostgreSQL: run, or reported as skipped when there is none. */
export function describeWithPostgres(name: string, fn: () => void): void {
  if (POSTGRES) describe(name, fn);
  else describe.skip(name + SKIPPED, fn);
}
