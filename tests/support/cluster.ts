// A throwaway PostgreSQL 15 cluster that a test can stop, start and restart for real:
// initdb into a temp dir on a private port (run as user postgres when the tests run as
// root), Unix socket in the same dir, fsync off. destroy() stops it and removes the dir.
// Optionally with password authentication over TCP (scram-sha-256) and TLS.

import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unusedPort } from "./ports.ts";

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

export interface ClusterOptions {
  /** TCP connections must authenticate as postgres with this password (scram-sha-256); the socket stays trust. */
  password?: string;
  /** Serve TLS with this certificate and key (PEM); with `clientCa`, client certificates signed by it are checked. */
  tls?: { cert: string; key: string; clientCa?: string };
  /** pg_hba.conf lines put before initdb's own (the first that matches decides). */
  hba?: string[];
  /** A streaming-replication standby of this (running) cluster, made by pg_basebackup. */
  standbyOf?: Cluster;
  /** More server settings (-c name=value). */
  settings?: Record<string, string>;
}

export interface Cluster {
  port: number;
  /** The directory of its Unix socket. */
  socketDirectory: string;
  /** postgres://postgres@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  start(): void;
  /** fast: sessions are terminated (57P01); immediate: the server just dies. */
  stop(mode?: "fast" | "immediate"): void;
  restart(mode?: "fast" | "immediate"): void;
  /** restart() without blocking this process: clients in it keep reading while the server goes down and comes back. */
  restartAsync(mode?: "fast" | "immediate"): Promise<void>;
  destroy(): void;
}

function asPostgres(args: string[]): string[] {
  return process.getuid?.() === 0 ? ["runuser", "-u", "postgres", "--", ...args] : args;
}

async function runAsync(args: string[], what: string): Promise<void> {
  const proc = Bun.spawn(asPostgres(args), { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`${what} failed (${code}): ${err}${out}`);
}

function run(args: string[], what: string): void {
  const r = Bun.spawnSync(asPostgres(args), { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${r.exitCode}): ${r.stderr.toString()}${r.stdout.toString()}`);
}

export async function createCluster(settings: ClusterOptions = {}): Promise<Cluster> {
  const BIN = postgresBinDir();
  if (!BIN) throw new Error("PostgreSQL's programs (initdb, pg_ctl) are not installed: set PG_BIN_DIR or install postgresql");
  const dir = mkdtempSync(join(tmpdir(), "pce-pg-"));
  if (process.getuid?.() === 0) {
    const id = Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString().trim();
    const gid = Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString().trim();
    chownSync(dir, Number(id), Number(gid));
  }
  const data = join(dir, "data");
  const owned = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    chmodSync(path, 0o600);
    if (process.getuid?.() === 0) chownSync(path, Number(Bun.spawnSync(["id", "-u", "postgres"]).stdout.toString()), Number(Bun.spawnSync(["id", "-g", "postgres"]).stdout.toString()));
    return path;
  };
  const auth = settings.password
    ? ["--auth-local=trust", "--auth-host=scram-sha-256", `--pwfile=${owned("pwfile", settings.password + "\n")}`]
    : ["-A", "trust"];
  if (settings.standbyOf) {
    // -R writes standby.signal and primary_conninfo: it starts as a hot standby that follows the primary.
    run([`${BIN}/pg_basebackup`, "-h", "127.0.0.1", "-p", String(settings.standbyOf.port), "-U", "postgres", "-D", data, "-R", "-X", "stream", "--no-sync", "--checkpoint=fast"], "pg_basebackup");
  } else {
    run([`${BIN}/initdb`, "-D", data, "-U", "postgres", ...auth, "--no-sync", "-E", "UTF8", "--locale=C.UTF-8"], "initdb");
  }
  if (settings.hba?.length) {
    const hba = join(data, "pg_hba.conf");
    const lines = settings.hba.join("\n") + "\n";
    run(["sh", "-c", `printf '%s' '${lines}' | cat - ${hba} > ${hba}.new && mv ${hba}.new ${hba}`], "pg_hba.conf");
  }
  const port = unusedPort();
  const clientCa = settings.tls?.clientCa ? ` -c ssl_ca_file=${owned("client-ca.crt", settings.tls.clientCa)}` : "";
  const tls = settings.tls ? ` -c ssl=on -c ssl_cert_file=${owned("server.crt", settings.tls.cert)} -c ssl_key_file=${owned("server.key", settings.tls.key)}${clientCa}` : "";
  const more = Object.entries(settings.settings ?? {}).map(([name, value]) => ` -c ${name}=${value}`).join("");
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off${tls}${more}`;
  let running = false;
  const ctl = (...args: string[]) => run([`${BIN}/pg_ctl`, "-D", data, "-w", "-t", "60", ...args], `pg_ctl ${args.join(" ")}`);
  return {
    port,
    socketDirectory: dir,
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
    async restartAsync(mode = "fast") {
      await runAsync([`${BIN}/pg_ctl`, "-D", data, "-w", "-t", "60", "-m", mode, "-o", options, "-l", join(dir, "log"), "restart"], "pg_ctl restart");
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
