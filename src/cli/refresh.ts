// `refresh [--rebuild]`: folds what writers noted into the rollup (the timer's job, every
// minute), with progress on stderr and a summary line (at debug when there was nothing to do). SIGTERM or SIGINT (systemd's stop or
// TimeoutStartSec, Ctrl-C) stops it at once: its statement is cancelled in PostgreSQL, the
// step it was in rolls back (the steps before it stay), its lock is released, exit code 1.

import { openDatabase } from "../backends/open.ts";
import { refreshWithProgress } from "../rollup/refresh-progress.ts";
import { EVERY_MINUTE, refreshProblem } from "../rollup/refresh.ts";
import type { Logger } from "../ops/log.ts";
import type { CommandLine } from "./command-line.ts";
import { onDatabase } from "./on-database.ts";

export async function runRefresh({ config, own }: CommandLine, logger: Logger): Promise<void> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    logger.warn("refresh stopping", { signal });
    stop.abort(signal);
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  const db = await openDatabase(config, false);
  await onDatabase(db, "refresh", refreshProblem, async () => {
    const refreshed = await refreshWithProgress("refresh", db.sql, {
      rebuild: own.get("rebuild") === "true",
      ...EVERY_MINUTE,
      signal: stop.signal,
    });
    // The timer runs it every minute: a run that found nothing to do is no news (1,440 lines a day).
    const idle = refreshed?.mode === "none" && refreshed.answers === 0;
    logger[idle ? "debug" : "info"]("refreshed", { ...refreshed, database: db.description });
  });
}
