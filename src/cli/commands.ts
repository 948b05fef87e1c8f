// The commands of the executable, their own flags and their help texts. One table drives
// the parsing in main.ts and every --help, so that what is documented is what is accepted.

import { settingsOf, type FlagSpec, type SettingsCommand } from "../config.ts";
import { TABLES } from "../load/load-csv.ts";
import { UNIT_KINDS } from "../systemd-unit.ts";
import { SQL_SCRIPTS } from "./print-sql.ts";

export interface OwnFlag extends FlagSpec {
  /** Shown after the flag in help: `--label <name>`. */
  value?: string;
  help: string;
}

export interface CommandSpec {
  name: string;
  /** Positional arguments, as shown in the usage line. */
  args?: string;
  summary: string;
  /** More lines for `<command> --help`. */
  details?: readonly string[];
  own: readonly OwnFlag[];
  /** Commands that read settings (flags and environment); the others take none. */
  settings?: SettingsCommand;
}

const tableColumns = Object.entries(TABLES).map(
  ([table, spec]) => `  ${table}: ${Object.keys(spec.columns).join(", ")} (key: ${spec.key.join(", ")}; required: ${spec.required.join(", ")})`,
);

export const COMMANDS: readonly CommandSpec[] = [
  {
    name: "serve",
    summary: "Serve the HTTP API (the default when no command is given)",
    own: [],
    settings: "serve",
    details: ["Signals: SIGHUP re-reads the API keys; SIGTERM/SIGINT finish requests in flight, then exit 0."],
  },
  {
    name: "migrate",
    summary: "Create or upgrade the tables and indexes, build what they need, then exit",
    own: [{ flag: "dry-run", kind: "bool", help: "List the pending steps and change nothing" }],
    settings: "migrate",
    details: ["Safe to repeat, and to run again after a failure. Each step is printed with its duration."],
  },
  {
    name: "refresh",
    summary: "Fold recent writes into the totals the reads start from (run it every minute)",
    own: [{ flag: "rebuild", kind: "bool", help: "Recompute every total from the daily rows" }],
    settings: "refresh",
    details: ["Reads stay exact without it, only slower. `systemd-unit refresh-timer` runs it every minute."],
  },
  {
    name: "load-csv",
    args: `<${Object.keys(TABLES).join("|")}> <file.csv|->`,
    summary: "Upsert a CSV file (or stdin: -) into a contract table of DATABASE_URL or --data-dir",
    own: [{ flag: "replace", kind: "bool", help: "Empty the table first (products: both tables), in the same transaction" }],
    settings: "load-csv",
    details: [
      "The first line names the columns, in any order; an empty unquoted cell is null.",
      "Columns:",
      ...tableColumns,
      "All or nothing: the whole file loads in one transaction; on an error nothing changes and",
      "the error names the line and the column. Rows already there (same key) are updated.",
      "Progress on stderr; a summary line (rows inserted and updated, duration) on stdout.",
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
  },
  {
    name: "hash-key",
    args: "[KEY]",
    summary: "Print the sha256:<hex> digest of a key, for the key file or PRODUCT_COST_API_KEYS",
    own: [],
    details: [
      "The key is read from the argument, else from stdin; on a terminal it is asked for without echo.",
      "An argument can be seen in `ps` and in the shell's history: prefer stdin or the prompt.",
    ],
  },
  {
    name: "systemd-unit",
    args: `[${UNIT_KINDS.join("|")}]`,
    summary: "Print a hardened systemd unit that runs this executable (service, refresh, refresh timer)",
    own: [
      { flag: "exec-path", kind: "string", value: "<path>", help: "Where the unit starts the executable from (default /usr/local/bin/product-cost-export)" },
    ],
    details: ["Settings go in /etc/product-cost-export/env (the unit's EnvironmentFile), not on this line."],
  },
  {
    name: "stage-files",
    summary: "Copy the service's files from /etc/product-cost-export into its runtime directory (the unit runs it, as root)",
    own: [{ flag: "reload", kind: "string", value: "<pid>", help: "Then send SIGHUP to the service's main process (systemctl reload)" }],
    details: [
      "Run by the packaged unit before each start and each reload (ExecStartPre=+, ExecReload=+):",
      "api-keys, database-url, refresh-database-url, tls-cert.pem and tls-key.pem, those that exist,",
      "copied into $RUNTIME_DIRECTORY for the service's own user, mode 0400; a file that is gone is removed.",
    ],
  },
  {
    name: "print-sql",
    args: `<${Object.keys(SQL_SCRIPTS).join("|")}>`,
    summary: "Print a SQL script the deployment needs (the read-only role), for psql",
    own: [],
  },
  { name: "help", args: "[command]", summary: "Show this text, or a command's own", own: [] },
  { name: "version", summary: "Print the version and the commit it was built from (also --version, -v)", own: [] },
];

export function commandNamed(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

const PROGRAM = "product-cost-export";

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
  const usage = [PROGRAM, command.name, command.args, command.own.length || command.settings ? "[flags]" : undefined].filter(Boolean).join(" ");
  const lines = [`Usage: ${usage}`, "", command.summary + "."];
  if (command.details) lines.push("", ...command.details);
  if (command.own.length) {
    lines.push("", "Flags:");
    for (const f of command.own) lines.push(`  ${`--${f.flag}${f.value ? ` ${f.value}` : ""}`.padEnd(30)} ${f.help}`);
  }
  if (command.settings) {
    lines.push("", "Settings (flag, environment variable, default):");
    for (const s of settingsOf(command.settings)) {
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
