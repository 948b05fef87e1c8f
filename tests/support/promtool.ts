// Prometheus's promtool, to check the shipped alert rules and the executable's /metrics as
// Prometheus itself reads them: the one on PATH, else the one in Debian's prometheus package,
// downloaded (not installed: no daemon, no service) and unpacked into the tests' cache.

import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";

const CACHE = "/var/cache/product-cost-export-tests/prometheus";

export function promtool(): string {
  const onPath = Bun.which("promtool");
  if (onPath) return onPath;
  const unpacked = join(CACHE, "usr/bin/promtool");
  if (existsSync(unpacked)) return unpacked;
  mkdirSync(CACHE, { recursive: true });
  const download = mkdtempSync(join(CACHE, "download-"));
  try {
    const got = Bun.spawnSync(["apt-get", "download", "-q", "prometheus"], { cwd: download, stderr: "pipe" });
    if (got.exitCode !== 0) throw new Error(`apt-get download prometheus failed: ${got.stderr.toString().trim()}`);
    const deb = readdirSync(download).find((f) => f.endsWith(".deb"));
    const x = Bun.spawnSync(["dpkg-deb", "-x", join(download, deb!), CACHE], { stderr: "pipe" });
    if (x.exitCode !== 0) throw new Error(`dpkg-deb -x failed: ${x.stderr.toString().trim()}`);
  } finally {
    rmSync(download, { recursive: true, force: true });
  }
  return unpacked;
}
