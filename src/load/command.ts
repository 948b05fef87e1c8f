// `product-cost-export load-csv <products|product_daily_costs> <file.csv> [--replace] [settings]`
// Loads a CSV into the configured database (DATABASE_URL, or the embedded one in --data-dir).

import { readFileSync } from "node:fs";
import { ConfigError, readCommandLine, type Config } from "../config.ts";
import { openDatabase } from "../db/open.ts";
import { refreshRollup } from "../db/refresh.ts";
import type { Logger } from "../log.ts";
import { loadCsv, LoadError, TABLES } from "./load-csv.ts";

export const LOAD_CSV_USAGE = `usage: product-cost-export load-csv <${Object.keys(TABLES).join("|")}> <file.csv|-> [--replace] (see load-csv --help)`;

/** Splits `TABLE FILE [--replace] [settings flags]` and reads the settings load-csv uses. */
export function parseLoadCsvArgs(args: readonly string[], env: Record<string, string | undefined>) {
  const line = readCommandLine(args, env, "load-csv", { own: [{ flag: "replace", kind: "bool" }], maxPositional: 2 });
  const [table, file] = line.positional;
  if (!table || !file) throw new ConfigError(LOAD_CSV_USAGE);
  if (!(table in TABLES)) throw new ConfigError(`load-csv: unknown table ${JSON.stringify(table)}; ${LOAD_CSV_USAGE}`);
  return { table, file, replace: line.own.get("replace") === "true", config: line.config };
}

export async function runLoadCsv(args: readonly string[], env: Record<string, string | undefined>, makeLogger: (c: Config) => Logger): Promise<void> {
  const { table, file, replace, config } = parseLoadCsvArgs(args, env);
  if (!config.databaseUrl && !config.dataDir) {
    throw new ConfigError("load-csv needs a database to keep the rows: set DATABASE_URL or --data-dir");
  }
  const logger = makeLogger(config);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  const db = await openDatabase(config, false);
  try {
    const rows = await loadCsv(db.sql, table, text, { replace });
    // Fold the new rows into the totals now: the next reads are fast at once.
    const refreshed = await refreshRollup(db.sql);
    logger.info("csv loaded", { table, file, rows, replaced: replace, database: db.description, refresh_ms: refreshed?.ms });
  } catch (err) {
    if (err instanceof LoadError) throw new ConfigError(`load-csv ${file}: ${err.message}`);
    throw err;
  } finally {
    await db.close(5);
  }
}
