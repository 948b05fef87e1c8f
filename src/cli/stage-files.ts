// `product-cost-export stage-files`: what the packaged unit runs as root (ExecStartPre=+ and
// ExecReload=+) before each start and each reload. It copies the operator's files from
// /etc/product-cost-export (root's alone, mode 0700) into the service's runtime directory,
// owned by the service's dynamic user and readable by it alone, under the names the service
// reads as systemd credentials (the unit points CREDENTIALS_DIRECTORY there).
//
// Why not LoadCredential=: systemd copies a credential once, when the unit starts, so
// `systemctl reload` re-read the old copy and an added key answered 401 until a restart.
// Copying at every reload, through a step systemd runs privileged, lets rotation work while
// the service itself keeps its sandbox (a dynamic user that cannot read /etc/product-cost-export).

import { chownSync, existsSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../settings/config.ts";
import { fileProblem, readOperatorFile } from "../settings/operator-file.ts";
import { CONFIG_DIRECTORY, STAGED_FILES } from "../ops/units.ts";
import type { CommandLine } from "./command-line.ts";


/**
 * Copies each file of `from` that exists into `to` (mode 0400, the owner of `to`), through a
 * temporary file and a rename so that the service never reads half a file, and removes the
 * copy of a file that is gone (a removed key file takes its keys with it). Returns what was
 * staged. Throws ConfigError (exit 2) when `to` is not given or a file cannot be read.
 */
export function stageFiles(from: string = CONFIG_DIRECTORY, to: string | undefined = process.env.RUNTIME_DIRECTORY): string[] {
  if (!to) throw new ConfigError("stage-files copies into the service's RuntimeDirectory: RUNTIME_DIRECTORY is not set (it runs from the unit, as ExecStartPre=+)");
  const target = firstRuntimeDirectory(to)!;
  const owner = statSync(target);
  const staged: string[] = [];
  for (const [source, name] of STAGED_FILES) {
    const path = join(from, source);
    const destination = join(target, name);
    if (!existsSync(path)) {
      rmSync(destination, { force: true });
      continue;
    }
    let content: Buffer;
    try {
      content = readOperatorFile(path).content;
    } catch (err) {
      throw new ConfigError(`stage-files: cannot read ${path}: ${fileProblem(err)}`);
    }
    const temporary = `${destination}.staging`;
    rmSync(temporary, { force: true }); // a run cut short: its mode would stay
    writeFileSync(temporary, content, { mode: 0o400 });
    chownSync(temporary, owner.uid, owner.gid);
    renameSync(temporary, destination);
    staged.push(source);
  }
  return staged;
}

/** The unit's runtime directory (RUNTIME_DIRECTORY; of several, the first). */
function firstRuntimeDirectory(value = process.env.RUNTIME_DIRECTORY): string | undefined {
  return value?.split(":")[0];
}

/** The file in the runtime directory the service rewrites after each reload: the number of reloads done. */
const RELOADS_FILE = "reloads";
/** How long `--reload` waits for the service to finish (a key file that keeps changing is given up on after 5 s). */
const RELOAD_WAIT_MS = 15_000;

const reloadsDone = (directory: string) => Number(existsSync(join(directory, RELOADS_FILE)) ? readFileSync(join(directory, RELOADS_FILE), "utf8") : 0) || 0;

/**
 * The service's side (serve.ts, after READY=1): counts a finished reload in its runtime
 * directory, for `stage-files --reload` to wait on. Nothing outside the unit.
 */
export function noteReloadDone(directory = firstRuntimeDirectory()): void {
  if (!directory) return;
  try {
    writeFileSync(join(directory, `${RELOADS_FILE}.new`), String(reloadsDone(directory) + 1));
    renameSync(join(directory, `${RELOADS_FILE}.new`), join(directory, RELOADS_FILE));
  } catch {
    // A reload is not undone for this: `systemctl reload` then returns before it ends.
  }
}

/**
 * `stage-files [--reload PID]`: stages the files, then (a reload) sends SIGHUP to the service
 * and waits until it has reloaded. systemd ends `systemctl reload` when this step exits; the
 * service tells RELOADING=1 and READY=1 itself, but a SIGHUP is handled later than this step
 * exits, and a removed key was still accepted just after `systemctl reload` returned.
 */
export async function runStageFiles({ own }: CommandLine): Promise<void> {
  const staged = stageFiles();
  process.stdout.write(`staged: ${staged.length ? staged.join(", ") : "nothing"}\n`);
  // The reload itself (no kill(1) needed: a minimal system may have none).
  const pid = own.get("reload");
  if (pid === undefined) return;
  if (!/^[1-9]\d*$/.test(pid)) throw new ConfigError(`stage-files --reload takes the service's main PID, got ${JSON.stringify(pid)}`);
  const directory = firstRuntimeDirectory()!; // stageFiles() above stops without one
  const before = reloadsDone(directory);
  process.kill(Number(pid), "SIGHUP");
  for (const until = Date.now() + RELOAD_WAIT_MS; Date.now() < until && reloadsDone(directory) <= before; ) await Bun.sleep(20);
}
