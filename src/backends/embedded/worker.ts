// The embedded PostgreSQL (PGlite) and its socket server, in a Worker: PGlite runs on the
// thread that calls it and blocks it for as long as a query runs, so it must not share a
// thread with the HTTP server. The main thread talks to it over a Unix socket with
// postgres.js, exactly as it talks to an external PostgreSQL.
//
// A new database never runs initdb: it starts from a seed made at build time (the
// migrated schema, with or without the demo data). A persistent database is first
// written to <dir>/pgdata.init and renamed to <dir>/pgdata once complete, so an
// interrupted first start never leaves a half database that looks whole.

import { PGlite } from "@electric-sql/pglite";
import { PGLiteSocketServer } from "@electric-sql/pglite-socket";
// Every entrypoint that creates PGlite must import its assets itself so the compiler embeds them.
import pgliteWasmPath from "@electric-sql/pglite/pglite.wasm" with { type: "file" };
import fsBundlePath from "@electric-sql/pglite/pglite.data" with { type: "file" };
import demoSeedPath from "../../../.build/seeds/demo.tar.zst" with { type: "file" };
import emptySeedPath from "../../../.build/seeds/empty.tar.zst" with { type: "file" };
import { existsSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { DATABASE_DIR, type Seed, type StartMessage, type WorkerMessage } from "./protocol.ts";

declare const self: Worker;

const SEEDS: Record<Seed, string> = { demo: demoSeedPath, empty: emptySeedPath };

let db: PGlite | undefined;
let server: PGLiteSocketServer | undefined;

const post = (message: WorkerMessage) => self.postMessage(message);

async function seedBlob(seed: Seed): Promise<Blob> {
  return new Blob([Bun.zstdDecompressSync(await Bun.file(SEEDS[seed]).bytes())]);
}

async function open(dataDir: string | undefined, loadDataDir: Blob | undefined, wasm: WebAssembly.Module): Promise<PGlite> {
  return PGlite.create({ dataDir, pgliteWasmModule: wasm, fsBundle: Bun.file(fsBundlePath), loadDataDir });
}

async function start(m: StartMessage): Promise<void> {
  const timings: Record<string, number> = {};
  const t0 = performance.now();
  const mark = (name: string) => (timings[name] = Math.round(performance.now() - t0));
  // The module compiles on threads of its own while this one unpacks the seed, if one is needed.
  const compiling = Bun.file(pgliteWasmPath)
    .arrayBuffer()
    .then((bytes) => WebAssembly.compile(bytes));
  const live = m.dataDir === undefined ? undefined : join(m.dataDir, DATABASE_DIR);
  const seed = live === undefined || !existsSync(live) ? await seedBlob(m.seed) : undefined;
  const wasm = await compiling;
  mark("wasm_compiled_ms");

  if (live === undefined) {
    db = await open(undefined, seed, wasm);
  } else {
    if (seed) {
      const init = `${live}.init`;
      rmSync(init, { recursive: true, force: true }); // left by an interrupted first start
      const fresh = await open(init, seed, wasm);
      await fresh.close();
      renameSync(init, live);
    }
    db = await open(live, undefined, wasm);
  }
  const created = seed !== undefined;
  mark("database_open_ms");

  server = new PGLiteSocketServer({ db, path: m.socketPath, maxConnections: m.maxConnections });
  await server.start();
  mark("socket_listening_ms");
  post({ type: "ready", created, timings });
}

async function stop(): Promise<void> {
  await server?.stop();
  await db?.close(); // a clean shutdown checkpoint, so the next start does no recovery
  server = undefined;
  db = undefined;
  post({ type: "stopped" });
}

self.onmessage = async (event: MessageEvent<StartMessage | { type: "stop" }>) => {
  try {
    if (event.data.type === "start") await start(event.data);
    else if (event.data.type === "stop") await stop();
  } catch (err) {
    post({ type: "error", message: err instanceof Error ? err.message : String(err) });
  }
};
