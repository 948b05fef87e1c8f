// The commands of the executable: one row each, from which their parsing, their refusals,
// the database check and every --help come, so that what is documented is what is accepted.
// main.ts looks the command up here and calls its run.

import { ConfigError, settingsOf, SETTINGS } from "../settings/config.ts";
import { TABLES } from "../load/load-csv.ts";
import { DEFAULT_INSTALL_PATH, UNIT_KINDS } from "../ops/units.ts";
import { COMMIT_DATE, COMMIT, VERSION } from "../version.ts";
import { usageWords, type CommandSpec } from "./command-line.ts";
import { manPage } from "./man-page.ts";
import { generateKey, hashKey, listKeys } from "./keys.ts";
import { runLoadCsv } from "./load-csv.ts";
import { runMigrate } from "./migrate.ts";
import { printSql, SQL_SCRIPTS } from "./print-sql.ts";
import { runRefresh } from "./refresh.ts";
import { serve } from "./serve.ts";
import { runStageFiles } from "./stage-files.ts";
import { printSystemdUnit } from "./systemd-unit.ts";

const PROGRAM = "product-cost-export";
const print = (text: string) => void process.stdout.write(text + "\n");

const tableColumns = Object.entries(TABLES).map(
  ([table, spec]) => `  ${table}: ${Object.keys(spec.columns).join(", ")} (key: ${spec.key.join(", ")}; required: ${spec.key.join(", ")})`,
);

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "serve",
    summary: "Serve the HTTP API (the default when no command is given)",
    details: ["Signals: SIGHUP re-reads the API keys; SIGTERM/SIGINT finish requests in flight, then exit 0."],
    run: serve,
  },
  {
    name: "migrate",
    summary: "Create or upgrade the tables and indexes, build what they need, then exit",
    own: [{ flag: "dry-run", kind: "bool", help: "List the pending steps and change nothing" }],
    needsDatabase: true,
    details: ["Safe to repeat, and to run again after a failure. Each step is printed with its duration."],
    run: runMigrate,
  },
  {
    name: "refresh",
    summary: "Fold recent writes into the totals the reads start from (run it every minute)",
    own: [{ flag: "rebuild", kind: "bool", help: "Recompute every total from the daily rows" }],
    needsDatabase: true,
    details: [
      "Reads stay exact without it, only slower. `systemd-unit refresh-timer` runs it every minute.",
      "On a database not at this build's schema it changes nothing: it names what `migrate` would apply, exit 1.",
    ],
    run: runRefresh,
  },
  {
    name: "load-csv",
    args: [{ name: "table", choices: { values: Object.keys(TABLES), verb: "loads into" } }, { name: "file.csv|-" }],
    summary: "Upsert a CSV file (or stdin: -) into a contract table of DATABASE_URL or --data-dir",
    own: [{ flag: "replace", kind: "bool", help: "Empty the table first (products: both tables), in the same transaction" }],
    needsDatabase: true,
    run: runLoadCsv,
    details: [
      "The first line names the columns, in any order; an empty unquoted cell is null.",
      "Columns:",
      ...tableColumns,
      "All or nothing: the whole file loads in one transaction; on an error nothing changes and",
      "the error names the line and the column. Rows already there (same key) are updated.",
      "Refused where read: a NUL byte, a field of more than 1,048,576 characters, a row of more",
      "than 4,194,304, more than 1,000 fields in a row.",
      "Progress on stderr; a summary line (rows inserted and updated, duration) on stdout.",
      "Then the rollup is refreshed where migrate built it. Exit 0 once the rows are committed:",
      "a refresh that fails or is stopped after the commit adds a warning line, no other exit.",
    ],
  },
  {
    name: "generate-key",
    summary: "Print a new random API key and the line for the key file",
    own: [{ flag: "label", kind: "string", value: "<name>", help: "A name for the key, shown in logs and metrics instead of a hash" }],
    details: [
      "stdout, line 1: the key (give it to the client; it is stored nowhere);",
      "line 2: `sha256:<hex>  # <name>`, to append to the key file (then SIGHUP or systemctl reload).",
    ],
    run: generateKey,
  },
  {
    name: "hash-key",
    args: [{ name: "KEY", optional: true }],
    summary: "Print the sha256:<hex> digest of a key, for the key file or PRODUCT_COST_API_KEYS",
    details: [
      "The key is read from the argument, else from stdin; on a terminal it is asked for without echo.",
      "An argument can be seen in `ps` and in the shell's history: prefer stdin or the prompt.",
    ],
    run: hashKey,
  },
  {
    name: "list-keys",
    summary: "List the API keys configured: label, fingerprint, digest prefix, expiry, state, rate (never a key)",
    own: [{ flag: "json", kind: "bool", help: "One JSON array instead of the table" }],
    details: [
      "Reads the keys as serve does (PRODUCT_COST_API_KEYS, PRODUCT_COST_API_KEYS_FILE, the systemd credential);",
      "with none of them set, /etc/product-cost-export/api-keys, where it exists.",
      "STATE: active; expiring (within 14 days); expired (answers 401: remove its line). RATE: the key's rate=, else RATE_LIMIT_PER_MINUTE.",
    ],
    run: listKeys,
  },
  {
    name: "systemd-unit",
    args: [{ name: "kind", optional: true, choices: { values: UNIT_KINDS, verb: "prints" } }],
    summary: "Print a hardened systemd unit that runs this executable (service, refresh, refresh timer)",
    own: [{ flag: "exec-path", kind: "string", value: "<path>", default: DEFAULT_INSTALL_PATH, help: "Where the unit starts the executable from" }],
    details: ["Settings go in /etc/product-cost-export/env (the unit's EnvironmentFile), not on this line."],
    run: printSystemdUnit,
  },
  {
    name: "stage-files",
    summary: "Copy the service's files from /etc/product-cost-export into its runtime directory (the unit runs it, as root)",
    own: [{ flag: "reload", kind: "string", value: "<pid>", help: "Then send SIGHUP to the service's main process and wait until it has reloaded (systemctl reload)" }],
    details: [
      "Run by the packaged unit before each start and each reload (ExecStartPre=+, ExecReload=+):",
      "api-keys, database-url, refresh-database-url, tls-cert.pem, tls-key.pem, db-client-cert.pem and db-client-key.pem, those that exist,",
      "copied into $RUNTIME_DIRECTORY for the service's own user, mode 0400; a file that is gone is removed.",
    ],
    run: runStageFiles,
  },
  {
    name: "print-sql",
    args: [{ name: "script", choices: { values: Object.keys(SQL_SCRIPTS), verb: "prints" } }],
    summary: "Print a SQL script the deployment needs (the read-only role), for psql",
    run: printSql,
  },
  {
    name: "man-page",
    summary: "Print the manual page product-cost-export(1) in roff, made from this help (the .deb installs it)",
    details: [
      "Every command, flag and setting, from the same tables as --help. To read it here: `product-cost-export man-page | man -l -`;",
      "to install it without the .deb: `product-cost-export man-page | gzip -9n > /usr/local/share/man/man1/product-cost-export.1.gz`.",
    ],
    run: () => void process.stdout.write(manPage(COMMANDS, SETTINGS, VERSION, COMMIT_DATE)),
  },
  { name: "help", args: [{ name: "command", optional: true }], summary: "Show this text, or a command's own", run: ({ args: [name] }) => print(name === undefined ? overviewHelp() : commandHelp(commandNamed(name))) },
  { name: "version", summary: "Print the version and the commit it was built from (also --version, -v)", run: () => print(`${PROGRAM} ${VERSION} (commit ${COMMIT})`) },
];

export function commandNamed(name: string): CommandSpec {
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) throw new ConfigError(`unknown command ${JSON.stringify(name)} (see --help)`);
  return command;
}

/** `product-cost-export --help`: the commands, and where each one's flags are explained. */
export function overviewHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `Usage: ${PROGRAM} [command] [arguments] [flags]`,
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    `Run \`${PROGRAM} <command> --help\` for a command's arguments, flags and settings.`,
    "Settings come from flags or environment variables; a flag wins over its variable.",
    "Exit codes: 0 done (or stopped cleanly), 1 unexpected failure, 2 bad configuration or usage (one line on stderr).",
  ].join("\n");
}

/** `product-cost-export <command> --help`: its usage, its own flags and the settings it reads, nothing else. */
export function commandHelp(command: CommandSpec): string {
  const own = command.own ?? [];
  const settings = settingsOf(command.name);
  const usage = [PROGRAM, ...usageWords(command, settings.length > 0)].join(" ");
  const lines = [`Usage: ${usage}`, "", command.summary + "."];
  if (command.details) lines.push("", ...command.details);
  if (own.length) {
    lines.push("", "Flags:");
    for (const f of own) lines.push(`  ${`--${f.flag}${f.value ? ` ${f.value}` : ""}`.padEnd(30)} ${f.help}${f.default ? ` (default ${f.default})` : ""}`);
  }
  if (settings.length) {
    lines.push("", "Settings (flag, environment variable, default):");
    for (const s of settings) {
      const flag = s.flag ? `--${s.flag}${s.kind === "bool" ? " [true|false]" : " <value>"}` : "(environment only)";
      const def = s.default === undefined ? "unset" : String(s.default);
      lines.push(`  ${flag.padEnd(30)} ${s.env.padEnd(28)} default: ${def}`);
      lines.push(`      ${s.help}`);
    }
  } else {
    lines.push("", "It reads no settings.");
  }
  lines.push("", "Exit codes: 0 done, 1 unexpected failure, 2 bad configuration or usage.");
  return lines.join("\n");
}
