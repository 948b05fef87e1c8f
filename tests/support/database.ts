// A throwaway database per test run on a real PostgreSQL server (support/postgres.ts finds
// or starts one): created (and migrated) on first use, dropped when the run ends. No mocks.

import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";
import { POSTGRES } from "./postgres.ts";

/** The server's URL; only tests registered with PostgreSQL (describeWithPostgres, describeBackends) reach for it. */
export const SERVER_URL = POSTGRES?.url ?? "postgres://postgres@127.0.0.1:5432/test";

export interface TestDatabase {
  name: string;
  url: string;
  /** A writable pool, for loading fixtures. */
  admin: Sql;
}

let current: Promise<TestDatabase> | undefined;

/** The server's URL of `database`, as `user` (the server's own user by default). */
export function databaseUrl(database: string, user?: string): string {
  const u = new URL(SERVER_URL);
  u.pathname = "/" + database;
  if (user) u.username = user;
  return u.toString();
}

/**
 * Databases and login roles of a test's own on the server, made anew (dropped first: a run
 * killed before its end leaves them behind). The function it returns drops them, ending
 * their sessions.
 */
export async function freshDatabases(names: readonly string[], roles: readonly string[] = []): Promise<() => Promise<void>> {
  const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  const drop = async () => {
    for (const name of names) await server.unsafe(`drop database if exists ${name} with (force)`);
    for (const role of roles) await server.unsafe(`drop role if exists ${role}`);
  };
  await drop();
  for (const name of names) await server.unsafe(`create database ${name}`);
  for (const role of roles) await server.unsafe(`create role ${role} login`);
  return async () => {
    try {
      await drop();
    } finally {
      await server.end();
    }
  };
}

async function create(): Promise<TestDatabase> {
  const name = `pce_test_${process.pid}_${Date.now().toString(36)}`;
  const server = postgres(SERVER_URL, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await server.unsafe(`create database ${name}`);
  } catch (err) {
    throw new Error(`cannot create a test database on ${SERVER_URL} (is PostgreSQL running?): ${(err as Error).message}`);
  } finally {
    await server.end();
  }
  const url = databaseUrl(name);
  const admin = createPool({ url, max: 4, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-tests" });
  await migrate(admin);
  return { name, url, admin };
}

/** The run's database (created on first call). */
export function testDatabase(): Promise<TestDatabase> {
  current ??= create();
  return current;
}

/** A read-only pool like the service's own, on the run's database. */
export async function servicePool(options: { max?: number; statementTimeoutMs?: number } = {}): Promise<Sql> {
  const db = await testDatabase();
  return createPool({
    url: db.url,
    max: options.max ?? 4,
    connectTimeoutMs: 5000,
    statementTimeoutMs: options.statementTimeoutMs ?? 30000,
    readOnly: true,
    applicationName: "pce-tests-service",
  });
}

export async function dropTestDatabase(): Promise<void> {
  if (!current) return;
  const db = await current;
  await db.admin.end({ timeout: 5 });
  const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  try {
    await server.unsafe(`drop database if exists ${db.name} with (force)`);
  } finally {
    await server.end();
  }
}
