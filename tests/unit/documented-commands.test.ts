// What the README and docs/ say the executable accepts, it accepts: every command and flag
// they name on a product-cost-export line exists (a flag of that command, or a setting it
// reads), and every row of the README's settings table names a setting with that flag and
// the stated default.

import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { COMMANDS } from "../../src/cli/commands.ts";
import { SETTINGS } from "../../src/settings/config.ts";

const ROOT = resolve(import.meta.dir, "../..");
const DOCS = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const GLOBAL = new Set(["--help", "-h", "--version", "-v"]);
// Quoted as mistakes an operator makes, which the executable refuses (docs/architecture.md).
const REFUSED_ON_PURPOSE = new Set(["migrate --port 80"]);

/** The flags `command` accepts: its own and those of the settings it reads. */
function flagsOf(command: string): Set<string> {
  const spec = COMMANDS.find((c) => c.name === command)!;
  return new Set([
    ...GLOBAL,
    ...(spec.own ?? []).map((f) => `--${f.flag}`),
    ...SETTINGS.filter((s) => (s.commands as readonly string[]).includes(command) && s.flag).map((s) => `--${s.flag}`),
  ]);
}

/** Each `product-cost-export <command> ...` in code (spans, blocks), and the flags on it. */
function invocations(text: string): { command: string; flags: string[]; line: string }[] {
  const found: { command: string; flags: string[]; line: string }[] = [];
  const code = [...text.matchAll(/```[^\n]*\n([\s\S]*?)```/g)].map((m) => m[1]!).concat([...text.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!));
  for (const block of code) {
    for (const line of block.split("\n")) {
      // systemctl and journalctl name the units (product-cost-export, -refresh.timer), not the executable.
      if (/\b(systemctl|journalctl)\b/.test(line)) continue;
      for (const m of line.matchAll(/product-cost-export(?![\w.-])((?:\s+(?:[a-z][a-z-]*|-{1,2}[a-z][a-z0-9-]*(?:=\S*)?|<[^>]*>|\[[^\]]*\]|[A-Z_]+|[\w./:@%-]+))*)/g)) {
        const words = m[1]!.trim().split(/\s+/).filter(Boolean);
        const command = COMMANDS.some((c) => c.name === words[0]) ? words[0]! : "serve";
        if (words[0] && /^[a-z]/.test(words[0]) && !COMMANDS.some((c) => c.name === words[0]) && !words[0].includes("/") && !words[0].includes(".")) {
          found.push({ command: words[0], flags: [], line });
          continue;
        }
        const flags = words.flatMap((w) => [...w.matchAll(/(?:^|\[)(-{1,2}[a-z][a-z0-9-]*)/g)].map((f) => f[1]!));
        found.push({ command, flags, line });
      }
    }
  }
  // A span that starts with a command's name is that command too: `migrate [--dry-run]`.
  for (const [, span] of text.matchAll(/`([a-z][a-z-]*(?: [^`\n]*)?)`/g)) {
    const [first, ...rest] = span!.split(/\s+/);
    if (!COMMANDS.some((c) => c.name === first) || !rest.some((w) => w.includes("-"))) continue;
    found.push({ command: first!, flags: rest.flatMap((w) => [...w.matchAll(/(?:^|\[)(-{1,2}[a-z][a-z0-9-]*)/g)].map((f) => f[1]!)), line: span! });
  }
  return found;
}

test("every command and flag the README and docs name on a product-cost-export line exists", () => {
  const problems: string[] = [];
  let checked = 0;
  for (const file of DOCS) {
    for (const { command, flags, line } of invocations(readFileSync(join(ROOT, file), "utf8"))) {
      checked++;
      if (REFUSED_ON_PURPOSE.has(line.trim())) continue;
      if (!COMMANDS.some((c) => c.name === command)) {
        problems.push(`${file}: unknown command ${command} in: ${line.trim()}`);
        continue;
      }
      const accepted = flagsOf(command);
      for (const flag of flags) if (!accepted.has(flag)) problems.push(`${file}: ${command} takes no ${flag}: ${line.trim()}`);
    }
  }
  expect(problems).toEqual([]);
  expect(checked).toBeGreaterThan(20); // not vacuous
});

test("the README's settings table: each row a setting, with its flag and the stated default", () => {
  const readme = readFileSync(join(ROOT, "README.md"), "utf8");
  const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| (`--[a-z0-9-]+`|\(environment only\)) \| ([^|]+) \|/gm)].map((m) => ({ env: m[1]!, flag: m[2]!.trim(), stated: m[3]!.trim() }));
  expect(rows.length).toBeGreaterThan(20);
  const wrong: unknown[] = [];
  for (const { env, flag, stated } of rows) {
    const setting = SETTINGS.find((s) => s.env === env);
    if (!setting) {
      wrong.push({ env, problem: "no such setting" });
      continue;
    }
    const documentedFlag = flag === "(environment only)" ? undefined : flag.replace(/`/g, "");
    if (documentedFlag !== (setting.flag ? `--${setting.flag}` : undefined)) wrong.push({ env, flag: documentedFlag, actual: setting.flag });
    // "`8080`", "`0` (off)": the value in the first code span; "unset…", "on in memory by hand": no default.
    const value = /^`([^`]*)`/.exec(stated)?.[1];
    const actual = setting.default === undefined ? undefined : String(setting.default);
    if (value !== actual) wrong.push({ env, stated, actual });
  }
  expect(wrong).toEqual([]);
});
