// Build step (run by build.sh, not part of the service): makes the two seeds the
// embedded database starts from, so the executable never runs initdb:
//   .build/seeds/empty.tar.zst  the migrated contract schema, no rows
//   .build/seeds/demo.tar.zst   the same plus sql/demo/demo_data.sql (a year ending today)
// Both go through the service's own migrate() over postgres.js, the same path as at run time.

import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import demoData from "../../../sql/demo/demo_data.sql" with { type: "text" };
import { createPool } from "../../database/client.ts";
import { migrate } from "../../rollup/migrations.ts";
import { refreshRollup } from "../../rollup/refresh.ts";

const outDir = resolve(process.argv[2] ?? ".build/seeds");
mkdirSync(outDir, { recursive: true });
const socketDir = mkdtempSync(join(tmpdir(), "pce-seed-"));

/** The entries of a ustar archive (as PGlite dumps it: no long names, no extensions) that `keep` names. */
function tarEntries(tar: Uint8Array, keep: (path: string) => boolean): Uint8Array {
  const text = (at: number, length: number) => new TextDecoder().decode(tar.subarray(at, at + length)).replace(/\0.*$/s, "");
  const kept: Uint8Array[] = [];
  let at = 0;
  while (at + 512 <= tar.length && tar[at] !== 0) {
    const size = parseInt(text(at + 124, 12).trim() || "0", 8);
    const length = 512 + Math.ceil(size / 512) * 512;
    if (keep(text(at, 100))) kept.push(tar.subarray(at, at + length));
    at += length;
  }
  kept.push(new Uint8Array(1024)); // the end: two empty blocks
  return Buffer.concat(kept);
}

async function buildSeed(name: string, withDemo: boolean): Promise<void> {
  const db = await PGlite.create();
  let redo = "";
  const socketPath = join(socketDir, `${name}.sock`);
  const server = new PGLiteSocketServer({ db, path: socketPath, maxConnections: 2 });
  await server.start();
  const sql = createPool({ path: socketPath, max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 0, readOnly: false, applicationName: "build-seeds" });
  try {
    await migrate(sql);
    if (withDemo) await sql.unsafe(demoData);
    await refreshRollup(sql, { rebuild: true });
    // Nothing connects to the templates (the service reads "postgres", and makes no database):
    // each is 8 MB of catalogs that every in-memory start would unpack.
    for (const template of ["template0", "template1"]) {
      await sql.unsafe(`alter database ${template} is_template false`);
      await sql.unsafe(`drop database ${template}`);
    }
    await sql.unsafe("vacuum analyze");
    // A checkpoint, so that the seed is a cleanly shut down data directory: one dumped after
    // its last writes made every start replay their WAL first (1.3 s of the demo's start,
    // against 0.7 s from a checkpointed seed, measured loading both with PGlite.create).
    await sql.unsafe("checkpoint");
    const [checkpoint] = await sql.unsafe<{ redo: string }[]>("select redo_wal_file as redo from pg_control_checkpoint()");
    redo = checkpoint!.redo;
  } finally {
    await sql.end({ timeout: 5 });
    await server.stop();
  }
  const tar = await db.dumpDataDir("none");
  await db.close();
  // The start replays from the checkpoint's own WAL segment; the others are old or kept for
  // reuse (16 MB each, unpacked at every in-memory start): left out.
  const needed = (path: string) => !/^\/?pg_wal\/[0-9A-F]{24}$/.test(path) || path.endsWith(redo);
  const packed = Bun.zstdCompressSync(tarEntries(new Uint8Array(await tar.arrayBuffer()), needed), { level: 19 });
  await Bun.write(join(outDir, `${name}.tar.zst`), packed);
  console.log(`build-seeds: ${name}.tar.zst ${(packed.length / 1e6).toFixed(1)} MB`);
}

try {
  await buildSeed("empty", false);
  await buildSeed("demo", true);
} finally {
  rmSync(socketDir, { recursive: true, force: true });
}
