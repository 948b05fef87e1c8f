// product-cost-export(1), printed by the executable itself (`man-page`, which the .deb installs
// gzipped as /usr/share/man/man1/product-cost-export.1.gz): made from the same tables as
// --help, the commands (cli/commands.ts) and the settings (settings/config.ts), so the manual
// says what the executable accepts. roff, as man(7) reads it.

import { CONFIG_DIRECTORY, STAGED_FILES } from "../ops/units.ts";
import type { SettingSpec } from "../settings/config.ts";
import { usageWords, type CommandSpec } from "./command-line.ts";

const PROGRAM = "product-cost-export";

/**
 * Text as roff reads it literally: a backslash is \e, every hyphen-minus \- (options and
 * names are copied from the page), and a line that would start with a control character
 * (. or ') starts with the zero-width \& instead.
 */
export function roffEscape(text: string): string {
  return text
    .replace(/\\/g, "\\e")
    .replace(/-/g, "\\-")
    .split("\n")
    .map((line) => (/^[.']/.test(line) ? `\\&${line}` : line))
    .join("\n");
}

/** Prose with its `code spans` in bold. */
function prose(text: string): string {
  return text
    .split(/(`[^`]+`)/)
    .map((part) => (part.startsWith("`") && part.endsWith("`") && part.length > 1 ? `\\fB${roffEscape(part.slice(1, -1))}\\fR` : roffEscape(part)))
    .join("");
}

const bold = (text: string) => `\\fB${roffEscape(text)}\\fR`;
const italic = (text: string) => `\\fI${roffEscape(text)}\\fR`;

/** A command's --help details: lines that start with spaces (the columns of load-csv) one to a line, indented; the others run on as prose. */
function details(lines: readonly string[]): string[] {
  const out: string[] = [];
  let indented = false;
  for (const line of lines) {
    if (/^\s/.test(line)) out.push(".br", `\\h'2n'${prose(line.trim())}`);
    else out.push(...(indented ? [".br"] : []), prose(line));
    indented = /^\s/.test(line);
  }
  return out;
}

function commandEntry(command: CommandSpec, settings: readonly SettingSpec[]): string[] {
  const [name, ...rest] = usageWords(command, settings.length > 0);
  const out = [".TP", [bold(name!), ...rest.map(italic)].join(" "), prose(command.summary + ".")];
  if (command.details?.length) out.push(".IP", ...details(command.details));
  for (const flag of command.own ?? []) {
    out.push(".RS", ".TP", `${bold(`--${flag.flag}`)}${flag.value ? ` ${italic(flag.value)}` : ""}`, prose(flag.help + (flag.default ? ` (default ${flag.default})` : "") + "."), ".RE");
  }
  if (settings.length) out.push(".IP", `Settings (see ${bold("SETTINGS")}): ${settings.map((s) => bold(s.env)).join(", ")}.`);
  return out;
}

function settingEntry(setting: SettingSpec): string[] {
  const flag = setting.flag ? `, ${bold(`--${setting.flag}`)} ${italic(setting.kind === "bool" ? "[true|false]" : "<value>")}` : "";
  const def = setting.default === undefined ? "unset" : String(setting.default);
  const facts = [
    setting.choices ? `One of: ${setting.choices.join(", ")}.` : undefined,
    setting.kind === "int" ? `A whole number from ${setting.min} to ${setting.max}.` : undefined,
    setting.secret ? "Environment only: a flag would show in ps." : undefined,
    `Default: ${def}. Read by: ${setting.commands.join(", ")}.`,
  ].filter((f): f is string => f !== undefined);
  return [".TP", bold(setting.env) + flag, prose(setting.help), ".br", roffEscape(facts.join(" "))];
}

/** The whole page: NAME to SEE ALSO. `date` is the build's (YYYY-MM-DD), or empty. */
export function manPage(commands: readonly CommandSpec[], settings: readonly SettingSpec[], version: string, date: string): string {
  const settingsOf = (name: string) => settings.filter((s) => (s.commands as readonly string[]).includes(name));
  const lines = [
    `.\\" ${PROGRAM}(1), printed by \`${PROGRAM} man-page\` from the tables of --help: edit those, not this.`,
    `.TH ${roffEscape(PROGRAM.toUpperCase())} 1 "${date}" "${roffEscape(`${PROGRAM} ${version}`)}" "User Commands"`,
    // Names and variables are copied from the page: not hyphenated, not stretched.
    ".nh",
    ".ad l",
    ".SH NAME",
    `${roffEscape(PROGRAM)} \\- read\\-only HTTP API of product costs over a date range`,
    ".SH SYNOPSIS",
    `${bold(PROGRAM)} [${italic("command")}] [${italic("arguments")}] [${italic("flags")}]`,
    ".br",
    `${bold(PROGRAM)} ${italic("command")} ${bold("--help")}`,
    ".SH DESCRIPTION",
    prose(
      `${PROGRAM} answers one question for a product-profit view, BI tools and scripts: what did each product cost over a date range ` +
        "(purchase cost, inbound freight, shipping to customer, warehouse fees, in USD), for callers holding a Bearer API key, " +
        "from the company's PostgreSQL (or an embedded one). One self-contained executable; with no command it serves the HTTP API (`serve`).",
    ),
    ".PP",
    prose("Settings come from flags or environment variables; a flag wins over its variable. A command reads only its own settings: a flag of another command is refused, a variable of another command ignored, so one environment file serves them all."),
    ".SH COMMANDS",
    ...commands.flatMap((c) => commandEntry(c, settingsOf(c.name))),
    ".SH SETTINGS",
    prose("Each setting's environment variable, its flag, what it does, its default and the commands that read it."),
    ...settings.flatMap(settingEntry),
    ".SH EXIT STATUS",
    ".TP", "0", "Done, or stopped cleanly.",
    ".TP", "1", "An unexpected failure (logged with its cause).",
    ".TP", "2", prose("Bad configuration, usage or input: one line on stderr naming every problem. Under systemd, the service is then not restarted."),
    ".SH FILES",
    ".TP", bold(`${CONFIG_DIRECTORY}/env`), prose("The packaged service's settings (its EnvironmentFile), mode 0600."),
    ".TP", bold(`${CONFIG_DIRECTORY}/refresh.env`), prose("The refresh's settings: the DATABASE_URL of the tables' owner."),
    ".TP",
    STAGED_FILES.map(([source]) => bold(`${CONFIG_DIRECTORY}/${source}`)).join(", "),
    prose("Those that exist are copied for the service's own user at each start and reload (`stage-files`), mode 0400."),
    ".TP", bold(`/usr/share/doc/${PROGRAM}/`), prose("README.md (install, configure, upgrade, troubleshoot), docs/, env.example (every setting at its default) and monitoring/ (alert rules, dashboard)."),
    ".SH SEE ALSO",
    `${bold("systemctl")}(1), ${bold("journalctl")}(1), ${bold("systemd.exec")}(5), ${bold("psql")}(1)`,
    "",
  ];
  return lines.join("\n");
}
