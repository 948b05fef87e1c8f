// Entry point: argv → the command's row of the table (cli/commands.ts) → its run, under the
// same last-resort handlers for every command. The only module that reads argv or turns a
// failure into an exit code (failures.ts classifies it: 2 for bad configuration, usage or
// input, 1 otherwise).

import "./production-mode.ts"; // first: before any library reads NODE_ENV
import "./early-signals.ts"; // then: a reload during the start is kept, not fatal
import { readCommandLine } from "./cli/command-line.ts";
import { commandHelp, commandNamed } from "./cli/commands.ts";
import { classify, exitOnUncaught } from "./failures.ts";
import { createLogger, stdoutIsJournal } from "./ops/log.ts";

/** The command and its own part of the line: `--version` and `--help` first, else serve when no command is named. */
function commandOf(argv: readonly string[]): [name: string, args: readonly string[]] {
  const first = argv[0];
  if (first === "--version" || first === "-v") return ["version", []];
  if (first === "--help" || first === "-h") return ["help", []];
  if (first === undefined || first.startsWith("-")) return ["serve", argv];
  return [first, argv.slice(1)];
}

async function main(argv: readonly string[]): Promise<void> {
  const [name, args] = commandOf(argv);
  const command = commandNamed(name);
  // `<command> --help` anywhere on its line: that command's help, whatever else is there.
  if (args.includes("--help") || args.includes("-h")) return void process.stdout.write(commandHelp(command) + "\n");
  const line = readCommandLine(args, process.env, command);
  const logger = createLogger({ level: line.config.logLevel, format: line.config.logFormat, journald: stdoutIsJournal() });
  // Last resort, serving included: a failure nothing else caught is logged with its cause
  // (never to a client), then the process exits 1 and systemd restarts it (docs/architecture.md).
  exitOnUncaught(logger);
  await command.run(line, logger);
}

main(process.argv.slice(2)).catch((err) => {
  // At priority err under journald (as the JSON lines say theirs), or `journalctl -p warning`
  // would hide why the service stopped: journald logs an unmarked stderr line at info.
  const priority = stdoutIsJournal(process.env, 2) ? "<3>" : "";
  process.stderr.write(`${priority}product-cost-export: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(classify(err).exitCode);
});
