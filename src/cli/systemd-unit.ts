// `systemd-unit [service|refresh|refresh-timer] [--exec-path PATH]`: prints a unit (their text:
// ../systemd-unit.ts), warning when the executable's path is one the unit's sandbox hides.

import { ConfigError } from "../settings/config.ts";
import { DEFAULT_INSTALL_PATH, systemdUnit, type UnitKind } from "../ops/units.ts";
import type { CommandLine } from "./command-line.ts";

export function printSystemdUnit({ own, args }: CommandLine): void {
  const execPath = own.get("exec-path")!;
  if (!execPath.startsWith("/") || /\s/.test(execPath)) throw new ConfigError(`systemd-unit: --exec-path must be an absolute path without spaces, got ${JSON.stringify(execPath)}`);
  // ProtectHome=yes hides /root and /home from the service: an executable there cannot start.
  for (const path of new Set([execPath, process.execPath])) {
    if (/^\/(root|home)(\/|$)/.test(path)) {
      process.stderr.write(`product-cost-export: warning: ${path} is under /root or /home, which the unit hides (ProtectHome=yes): install the executable as ${DEFAULT_INSTALL_PATH} and use that path\n`);
    }
  }
  process.stdout.write(systemdUnit((args[0] ?? "service") as UnitKind, execPath));
}
