// A command's Config from a command line and an environment, read as the executable reads it.

import { readCommandLine } from "../../src/cli/command-line.ts";
import { commandNamed } from "../../src/cli/commands.ts";
import type { Config } from "../../src/settings/config.ts";

/** The settings of `command` (serve by default) from flags and the environment. */
export function loadConfig(argv: readonly string[], env: Record<string, string | undefined>, command = "serve"): Config {
  return readCommandLine(argv, env, commandNamed(command)).config;
}
