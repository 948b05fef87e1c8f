// The embedded database (PGlite in a worker, reached over its Unix socket with postgres.js,
// as the service does), once per test process, in memory, starting from the empty seed.
// It is opened as the service opens it to serve: read-only by default
// (default_transaction_read_only) with the serving planner settings, so a test reads through
// what production reads through. PGlite is one session, so that setting holds for every
// connection: fixtures are written through `readWrite`, each statement in its own
// `begin read write` transaction.

import type { Sql } from "../../src/database/client.ts";
import { openEmbedded, type EmbeddedDatabase } from "../../src/backends/embedded/embedded.ts";

let current: Promise<EmbeddedDatabase> | undefined;

export function embeddedDatabase(): Promise<EmbeddedDatabase> {
  current ??= openEmbedded({ dataDir: undefined, demoData: false, readOnly: true, connectTimeoutMs: 5000 });
  return current;
}

export async function closeEmbeddedDatabase(): Promise<void> {
  if (!current) return;
  const db = await current;
  current = undefined;
  await db.close(5);
}

const isTemplate = (args: unknown[]) => Array.isArray(args[0]) && "raw" in (args[0] as object);

/**
 * `sql`, but every query it runs (a tagged template, unsafe(), begin()) runs in a read-write
 * transaction, so fixtures can be written on a database whose sessions are read-only by
 * default. Helper calls such as sql(rows) inside a template pass through untouched.
 */
export function readWrite(sql: Sql): Sql {
  return new Proxy(sql, {
    apply(target, self, args: unknown[]) {
      const query = Reflect.apply(target, self, args) as Promise<unknown>;
      if (!isTemplate(args)) return query;
      // Still the query object, so it can be a fragment of another template; awaited, it runs
      // (once) inside a read-write transaction instead.
      let run: Promise<unknown> | undefined;
      const once = () => (run ??= target.begin("read write", (tx) => (tx as unknown as (...a: unknown[]) => Promise<unknown>)(...args)));
      return Object.assign(query, {
        then: (ok?: (v: unknown) => unknown, fail?: (e: unknown) => unknown) => once().then(ok, fail),
        catch: (fail: (e: unknown) => unknown) => once().catch(fail),
        finally: (done: () => void) => once().finally(done),
      });
    },
    get(target, property, receiver) {
      if (property === "unsafe") {
        return (text: string, params?: unknown[]) => target.begin("read write", (tx) => tx.unsafe(text, params as never));
      }
      if (property === "begin") {
        return (optionsOrFn: string | ((tx: unknown) => unknown), fn?: (tx: unknown) => unknown) =>
          typeof optionsOrFn === "string"
            ? target.begin(`read write ${optionsOrFn}`, fn as never)
            : target.begin("read write", optionsOrFn as never);
      }
      return Reflect.get(target, property, receiver);
    },
  }) as Sql;
}
