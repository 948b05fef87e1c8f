// `refresh [--rebuild]`: folds what writers noted into the rollup (the timer's job, every
// minute), with progress on stderr and a summary line.

import { openDatabase } from "../db/open.ts";
import { refreshWithProgress } from "../db/refresh-progress.ts";
import { refreshProblem } from "../db/refresh.ts";
import type { Logger } from "../log.ts";
import type { CommandLine } from "./command-line.ts";
import { onDatabase } from "./on-database.ts";

export async function runRefresh({ config, own }: CommandLine, logger: Logger): Promise<void> {
  const db = await openDatabase(config, false);
  await onDatabase(db, "refresh", refreshProblem, async () => {
    const refreshed = await refreshWithProgress("refresh", db.sql, { rebuild: own.get("rebuild") === "true" });
    logger.info("refreshed", { ...refreshed, database: db.description });
  });
}
