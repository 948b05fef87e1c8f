// A minimal Debian 12 system with systemd as PID 1, for the tests that install the .deb as an
// operator would: a root file system made by mmdebstrap (cached between runs), booted by
// systemd-nspawn on the host's network (so it reaches the host's PostgreSQL), driven through
// nsenter. Both tools are Debian packages; when missing they are installed with apt.

import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";

const CACHE = "/var/cache/product-cost-export-tests";
// What the root file system holds; a new list makes a new cached file.
// (psql and openssl: README deploy step 3 runs on the VM.)
const PACKAGES = "systemd,systemd-sysv,dbus,curl,ca-certificates,postgresql-client,openssl";
export const ROOTFS = join(CACHE, `bookworm-minbase-${PACKAGES.replaceAll(",", "+")}.tar`);

/** The variable that skips the real-systemd tests (they then say so in their names). */
export const SKIP_VARIABLE = "PCE_SKIP_SYSTEMD_TESTS";

function sh(args: string[], options: { stdin?: string; timeoutMs?: number } = {}) {
  const r = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe", stdin: options.stdin === undefined ? "ignore" : Buffer.from(options.stdin), timeout: options.timeoutMs });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/**
 * Why the tests cannot run here, or undefined: they need root (nspawn, nsenter), and
 * mmdebstrap, systemd-nspawn and lintian, which are installed with apt-get when missing.
 */
export function systemdTestsUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return "the real-systemd tests need root (systemd-nspawn boots a container)";
  const missing = [
    ["mmdebstrap", "mmdebstrap"],
    ["systemd-nspawn", "systemd-container"],
    ["dpkg-deb", "dpkg"],
    ["lintian", "lintian"],
  ].filter(([tool]) => !Bun.which(tool!));
  if (missing.length === 0) return undefined;
  if (!Bun.which("apt-get")) return `the real-systemd tests need ${missing.map(([t]) => t).join(" and ")}, and there is no apt-get to install them`;
  const packages = missing.map(([, p]) => p!);
  const r = sh(["apt-get", "install", "-y", "-q", ...packages], { timeoutMs: 300_000 });
  if (r.code !== 0) return `apt-get install ${packages.join(" ")} failed: ${r.stderr.trim().split("\n").at(-1)}`;
  return undefined;
}

/** The cached root file system, made when missing (about 15 s). */
export function rootfs(): string {
  if (existsSync(ROOTFS)) return ROOTFS;
  mkdirSync(CACHE, { recursive: true });
  const partial = join(CACHE, `partial-${process.pid}.tar`); // mmdebstrap reads the format from the name
  const r = sh(["mmdebstrap", "--variant=minbase", `--include=${PACKAGES}`, "bookworm", partial], { timeoutMs: 600_000 });
  if (r.code !== 0) throw new Error(`mmdebstrap failed: ${r.stderr.slice(-2000)}`);
  Bun.spawnSync(["mv", partial, ROOTFS]);
  return ROOTFS;
}

export interface Machine {
  /** The container's root directory, seen from the host. */
  root: string;
  /** Runs a command inside, as root; its exit code and output. */
  run(args: string[], stdin?: string): { code: number | null; stdout: string; stderr: string };
  /** Runs a shell command inside; throws with its stderr unless it exits 0; its stdout. */
  sh(script: string): string;
  /** Powers it off and removes its files. */
  destroy(): Promise<void>;
}

/** Boots a fresh copy of the root file system with systemd as PID 1; resolves once it is running. */
export async function bootMachine(): Promise<Machine> {
  const root = mkdtempSync(join(tmpdir(), "pce-machine-"));
  const unpacked = sh(["tar", "-xf", rootfs(), "-C", root]);
  if (unpacked.code !== 0) throw new Error(`cannot unpack ${ROOTFS}: ${unpacked.stderr}`);
  const name = `pce-test-${process.pid}`;
  // --register=no and --keep-unit: the host need not run systemd or machined.
  const nspawn: Subprocess = Bun.spawn(["systemd-nspawn", "-D", root, "--boot", `--machine=${name}`, "--register=no", "--keep-unit", "--console=passive"], {
    stdout: "ignore",
    stderr: "pipe",
    stdin: "ignore",
  });
  let leader: number | undefined;
  for (let i = 0; i < 300 && leader === undefined; i++) {
    await Bun.sleep(100);
    const child = sh(["pgrep", "-P", String(nspawn.pid)]).stdout.trim().split("\n")[0];
    if (child) leader = Number(child);
    if (nspawn.exitCode !== null) break;
  }
  if (leader === undefined) throw new Error(`systemd-nspawn did not start: ${await new Response(nspawn.stderr as ReadableStream).text()}`);
  const run = (args: string[], stdin?: string) => sh(["nsenter", "-t", String(leader), "-a", ...args], { stdin, timeoutMs: 120_000 });
  // Until its bus is up systemctl cannot even ask; then it waits for the boot to finish.
  let running = run(["systemctl", "is-system-running", "--wait"]);
  for (let i = 0; i < 100 && !["running", "degraded"].includes(running.stdout.trim()); i++) {
    await Bun.sleep(100);
    running = run(["systemctl", "is-system-running", "--wait"]);
  }
  if (!["running", "degraded"].includes(running.stdout.trim())) throw new Error(`the container's systemd is ${running.stdout.trim() || "unreachable"}: ${running.stderr}`);
  return {
    root,
    run,
    sh(script: string) {
      const r = run(["sh", "-c", script]);
      if (r.code !== 0) throw new Error(`in the container: ${script}\n${r.stderr}${r.stdout}`);
      return r.stdout;
    },
    async destroy() {
      // SIGTERM asks the container's systemd to power off; then it is killed if it lingers.
      nspawn.kill("SIGTERM");
      const stopped = await Promise.race([nspawn.exited.then(() => true), Bun.sleep(15_000).then(() => false)]);
      if (!stopped) {
        nspawn.kill("SIGKILL");
        await nspawn.exited;
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
