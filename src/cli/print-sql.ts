// SQL the deployment needs, printed by the executable itself (`print-sql <name>`): the
// executable travels alone, without the repository's sql/ directory.

import dailyIndex from "../../sql/roles/daily-index.sql" with { type: "text" };
import readOnlyRole from "../../sql/roles/read-only-role.sql" with { type: "text" };

import type { CommandLine } from "./command-line.ts";

export const SQL_SCRIPTS: Record<string, string> = {
  "read-only-role": readOnlyRole,
  "daily-index": dailyIndex,
};

/** `print-sql <name>`: the script, for psql. */
export function printSql({ args }: CommandLine): void {
  process.stdout.write(SQL_SCRIPTS[args[0]!]!);
}
