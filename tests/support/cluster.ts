// A throwaway PostgreSQL 15 cluster that a test can stop, start and restart for real:
// initdb into a temp dir on a private port (run as user postgres when the tests run as
// root), Unix socket in the same dir, fsync off. destroy() stops it and removes the dir.

import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The directory of PostgreSQL's programs (initdb, pg_ctl): PG_BIN_DIR when set (only it),
 * else the newest installed under /usr/lib/postgresql; undefined when there is none.
 */
export function postgresBinDir(): string | undefined {
  const candidates = process.env.PG_BIN_DIR ? [process.env.PG_BIN_DIR] : [];
  if (!process.env.PG_BIN_DIR && existsSync("/usr/lib/postgresql")) {
    const versions = readdirSync("/usr/lib/postgresql").sort((a, b) => Number(b) - Number(a));
    candidates.push(...versions.map((v) => `/usr/lib/postgresql/${v}/bin`));
  }
  return candidates.find((dir) => existsSync(join(dir, "initdb")) && existsSync(join(dir, "pg_ctl")));
}

export interface Cluster {
  port: number;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): void;
  /** fast: sessions are terminated (57P01); immediate: the server just dies. */
  stop(mode?: "fast" | "immediate"): void;
  restart(mode?: "fast" | "immediate"): void;
  destroy(): void;
}

function asPostgres(args: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...args] : args;
}

function run(args: string[], what: string): void {
  const r = Bun.spawnSync(asPostgres(args), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

async function freePort(): Promise<number> {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}

export async function createCluster(): Promise<Cluster> {
  const BIN = postgresBinDir();
  if (!BIN) throw new Error("PostgreSQL's programs (initdb, pg_ctl) are not installed: set PG_BIN_DIR or install postgresql");
  const dir = mkdtempSync(join(tmpdir(), "pce-pg-"));
  if (process.getuid?.() === 0) {
    const id = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
    const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
    chownSync(dir, Number(id), Number(gid));
  }
  const data = join(dir, "data");
  run([`${BIN}/initdb`, "-D", data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"], "initdb");
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
  let running = false;
  const ctl = (...args: string[]) => run([`${BIN}/pg_ctl`, "-D", data, "-w", "-t", "60", ...args], `pg_ctl ${args.join(" ")}`);
  return {
    port,
    url: (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`,
    start() {
      ctl("-o", options, "-l", join(dir, "log"), "start");
      running = true;
    },
    stop(mode = "fast") {
      ctl("-m", mode, "stop");
      running = false;
    },
    restart(mode = "fast") {
      ctl("-m", mode, "-o", options, "-l", join(dir, "log"), "restart");
      running = true;
    },
    destroy() {
      try {
        if (running) ctl("-m", "immediate", "stop");
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
