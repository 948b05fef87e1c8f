// The embedded database (PGlite in a worker, reached over its Unix socket with postgres.js,
// as the service does), once per test process, in memory, starting from the empty seed.

import { openEmbedded, type EmbeddedDatabase } from "../../src/db/embedded/embedded.ts";

let current: Promise<EmbeddedDatabase> | undefined;

export function embeddedDatabase(): Promise<EmbeddedDatabase> {
  current ??= openEmbedded({ dataDir: undefined, demoData: false, readOnly: false, connectTimeoutMs: 5000 });
  return current;
}

export async function closeEmbeddedDatabase(): Promise<void> {
  if (!current) return;
  const db = await current;
  current = undefined;
  await db.close(5);
}
