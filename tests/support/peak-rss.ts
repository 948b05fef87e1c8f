// A command's own peak RSS. A child's ru_maxrss starts at its parent's peak (at exec Linux keeps
// the high-water mark of the memory the child leaves, and Bun spawns with vfork: the parent's),
// so a binary spawned by a test that once held 300 MB reports 300 MB however little it used.
// Run as a script by a fresh `bun`, this file spawns the command and writes its exit and peak
// to a file: the peak is then the command's own (or this script's, about 40 MB, if larger).

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface MeasuredRun {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  /** The command's peak resident memory, MiB. */
  peakMb: number;
}

/** Runs `argv` (stdin from `stdin`, a path such as /dev/zero, or none) with `env`, and measures its peak RSS. */
export function runWithPeakRss(argv: string[], env: Record<string, string>, stdin?: string): MeasuredRun {
  const dir = mkdtempSync(join(tmpdir(), "pce-peak-"));
  try {
    const out = join(dir, "peak.json");
    const r = Bun.spawnSync([process.execPath, import.meta.path, out, ...argv], { env, stdin: stdin ? Bun.file(stdin) : "ignore", stdout: "pipe", stderr: "pipe" });
    const { code, signal, maxRss } = JSON.parse(readFileSync(out, "utf8")) as { code: number | null; signal: string | null; maxRss: number };
    return { code, signal, stdout: r.stdout.toString(), stderr: r.stderr.toString(), peakMb: maxRss / 2 ** 20 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const [out, ...argv] = process.argv.slice(2);
  const r = Bun.spawnSync(argv, { stdin: "inherit", stdout: "inherit", stderr: "inherit" });
  writeFileSync(out!, JSON.stringify({ code: r.exitCode, signal: r.signalCode ?? null, maxRss: r.resourceUsage.maxRSS }));
}
