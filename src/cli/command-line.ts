// A command line read against its command's row of the table (cli/commands.ts): its own
// flags, its arguments and the settings it reads, every problem reported at once in one
// ConfigError, each kind of refusal in one wording whatever the command.

import { boolOf, ConfigError, readSettings, settingsOf, SETTINGS, type Config } from "../settings/config.ts";
import type { Logger } from "../ops/log.ts";

/** A command's own flag (`--rebuild`, `--label NAME`), beside the settings' flags. */
export interface OwnFlag {
  flag: string; // without the leading --
  kind: "string" | "bool";
  /** Shown after the flag in help: `--label <name>`. */
  value?: string;
  /** The value when the flag is not given (a boolean flag not given is false). */
  default?: string;
  help: string;
}

/** A positional argument, shown in the usage line as `<name>` (`[name]` when optional). */
export interface ArgSpec {
  name: string;
  optional?: boolean;
  /** The values it takes, and the verb of the refusal: "print-sql prints one of: read-only-role". */
  choices?: { values: readonly string[]; verb: string };
}

export interface CommandSpec {
  name: string;
  args?: readonly ArgSpec[];
  summary: string;
  /** More lines for `<command> --help`. */
  details?: readonly string[];
  own?: readonly OwnFlag[];
  /** It changes a database that must outlive it: DATABASE_URL or --data-dir, never the in-memory one. */
  needsDatabase?: boolean;
  run(line: CommandLine, logger: Logger): void | Promise<void>;
}

export interface CommandLine {
  /** The settings the command reads; every other one at its default. */
  config: Config;
  /** The command's own flags by name, defaults filled in; a boolean flag is "true" or "false". */
  own: ReadonlyMap<string, string>;
  args: readonly string[];
}

/** Where a refused line is explained: `serve` is the default command, so its hint is plain --help. */
const seeHelp = (command: string) => `(see ${command === "serve" ? "" : command + " "}--help)`;

const isBoolWord = (word: string | undefined) => word !== undefined && boolOf(word) !== undefined;

/**
 * Splits `--name value`, `--name=value`, boolean flags (`--name`, `--name false`,
 * `--name=false`: "true" or "false") and positional arguments; `--` ends the flags. A flag
 * not among `command`'s `flags` is refused, naming the commands it belongs to if any.
 */
function parseArgs(argv: readonly string[], command: string, flags: readonly { flag: string; kind: string }[], problems: string[]) {
  const byFlag = new Map(flags.map((s) => [s.flag, s]));
  const values = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positional.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq === -1 ? arg.slice(2) : arg.slice(2, eq);
    const spec = byFlag.get(name);
    if (!spec) {
      const other = SETTINGS.find((s) => s.flag && s.flag === name);
      problems.push(other ? `--${name} is a setting of ${other.commands.join(", ")}, not of ${command} ${seeHelp(command)}` : `unknown flag --${name} ${seeHelp(command)}`);
      // A setting of another command: its value goes with it, not among the arguments.
      if (other && eq === -1 && (other.kind !== "bool" || isBoolWord(argv[i + 1]))) i++;
      continue;
    }
    if (values.has(name)) problems.push(`flag --${name} is given twice`);
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else if (spec.kind === "bool") value = isBoolWord(argv[i + 1]) ? argv[++i]! : "true";
    else if (i + 1 < argv.length) value = argv[++i]!;
    else problems.push(`flag --${name} needs a value`);
    if (value === undefined) continue;
    if (spec.kind === "bool") {
      const on = boolOf(value);
      if (on === undefined) problems.push(`--${name} must be true or false, got ${JSON.stringify(value)}`);
      else values.set(name, String(on));
    } else values.set(name, value);
  }
  return { values, positional };
}

/** `<table> <file.csv|->`: the arguments as the usage line shows them. */
export function argsUsage(args: readonly ArgSpec[]): string {
  const shown = (a: ArgSpec) => a.choices?.values.join("|") ?? a.name;
  return args.map((a) => (a.optional ? `[${shown(a)}]` : `<${shown(a)}>`)).join(" ");
}

/** A command's usage after the program's name: `load-csv <table> <file.csv|-> [flags]` as words ([flags] where it takes any). */
export function usageWords(command: CommandSpec, readsSettings: boolean): string[] {
  const words = [command.name];
  if (command.args) words.push(argsUsage(command.args));
  if (command.own?.length || readsSettings) words.push("[flags]");
  return words;
}

function checkArgs(command: CommandSpec, given: readonly string[], problems: string[]): void {
  const specs = command.args ?? [];
  if (specs.some((a, i) => !a.optional && given[i] === undefined)) problems.push(`${command.name} needs ${argsUsage(specs)} ${seeHelp(command.name)}`);
  specs.forEach((a, i) => {
    const value = given[i];
    if (a.choices && value !== undefined && !a.choices.values.includes(value)) {
      problems.push(`${command.name} ${a.choices.verb} one of: ${a.choices.values.join(", ")} (not ${JSON.stringify(value)})`);
    }
  });
  for (const extra of given.slice(specs.length)) problems.push(`unexpected argument ${JSON.stringify(extra)} ${seeHelp(command.name)}`);
}

/**
 * Reads `command`'s line and the environment: its own flags, its arguments and its settings
 * (a setting of another command is refused, naming whose it is). A command that changes a
 * database is refused without one.
 */
export function readCommandLine(argv: readonly string[], env: Record<string, string | undefined>, command: CommandSpec): CommandLine {
  const problems: string[] = [];
  const settings = settingsOf(command.name).filter((s) => s.flag);
  const own = command.own ?? [];
  const parsed = parseArgs(argv, command.name, [...settings, ...own], problems);
  checkArgs(command, parsed.positional, problems);
  const isOwn = (name: string) => own.some((f) => f.flag === name);
  const config = readSettings(command.name, new Map([...parsed.values].filter(([name]) => !isOwn(name))), env, problems);
  if (problems.length) throw new ConfigError(problems.join("; "));
  // An in-memory database would be gone at exit, and what was done with it.
  if (command.needsDatabase && !config.databaseUrl && !config.dataDir) {
    throw new ConfigError(`${command.name} needs a database to change: set DATABASE_URL or --data-dir`);
  }
  const ownValues = own.flatMap((f) => {
    const value = parsed.values.get(f.flag) ?? f.default;
    return value === undefined ? [] : [[f.flag, value] as const];
  });
  return { config, own: new Map(ownValues), args: parsed.positional };
}
