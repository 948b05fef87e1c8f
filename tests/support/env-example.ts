// docs/env.example, the sample of /etc/product-cost-export/env that the .deb installs beside
// the unit: every setting `serve` reads from its environment, commented out at its default,
// with its help text, made from the settings table itself (src/settings/config.ts) so that it
// cannot drift: tests/unit/env-example.test.ts compares, `bun tests/support/env-example.ts --write`
// writes it again.

import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { SETTINGS } from "../../src/settings/config.ts";

export const ENV_EXAMPLE = resolve(import.meta.dir, "../../docs/env.example");

/** Words wrapped at `width`, each line behind "# ". */
function comment(text: string, width = 92): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(`# ${line}`);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(`# ${line}`);
  return lines;
}

export function envExample(): string {
  const head = [
    "# /etc/product-cost-export/env: the service's settings, one VARIABLE=value a line (no quotes,",
    "# no spaces around =), root's, mode 0600: install -m 0600 this file there, then uncomment and",
    "# set what you need. Every setting `serve` reads, at its default; `product-cost-export serve",
    "# --help` says the same. Needed: DATABASE_URL (or the URL alone in database-url beside this",
    "# file), and keys in api-keys. README: Deploy on a VM under systemd, Configuration.",
  ];
  const body = SETTINGS.filter((s) => (s.commands as readonly string[]).includes("serve")).flatMap((s) => [
    "",
    ...comment(s.help),
    `#${s.env}=${s.default === undefined ? "" : String(s.default)}`,
  ]);
  return [...head, ...body].join("\n") + "\n";
}

if (import.meta.main && process.argv.includes("--write")) writeFileSync(ENV_EXAMPLE, envExample());
