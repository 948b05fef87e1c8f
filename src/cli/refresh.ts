// `refresh [--rebuild]`: folds what writers noted into the rollup (the timer's job, every
// minute), with progress on stderr and a summary line.

import { identifyPeer } from "../db/not-postgresql.ts";
import { openDatabase } from "../db/open.ts";
import { refreshWithProgress } from "../db/refresh-progress.ts";
import { refreshProblem } from "../db/refresh.ts";
import type { Logger } from "../log.ts";
import type { CommandLine } from "./command-line.ts";

export async function runRefresh({ config, own }: CommandLine, logger: Logger): Promise<void> {
  const db = await openDatabase(config, false);
  let failed = false;
  try {
    const refreshed = await refreshWithProgress("refresh", db.sql, { rebuild: own.get("rebuild") === "true" });
    logger.info("refreshed", { ...refreshed, database: db.description });
  } catch (err) {
    failed = true;
    const found = refreshProblem(await identifyPeer(err));
    if (found) throw new Error(`cannot refresh: ${found.cause}; ${found.fix}`);
    throw err;
  } finally {
    // After a failure nothing is worth waiting for: a connection attempt still under way would hold the exit for the whole grace.
    await db.close(failed ? 0 : 5);
  }
}
