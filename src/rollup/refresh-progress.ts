// The refresh as the commands run it (migrate, refresh, load-csv): with progress on stderr.

import { progressLines } from "../ops/progress.ts";
import type { Sql } from "../database/client.ts";
import { refreshRollup, type RefreshOptions } from "./refresh.ts";

const STEPS = { totals: "adding up daily rows into totals to date", answers: "rendering the answers of calendar periods" } as const;

/** Folds the change log in, with progress lines; the report for the log. */
export async function refreshWithProgress(command: string, sql: Sql, options: Pick<RefreshOptions, "rebuild" | "renderBudgetMs" | "upkeepWhenIdle" | "signal"> = {}) {
  const lines = progressLines(command, { quietWhenQuick: true });
  try {
    return await refreshRollup(sql, { ...options, onProgress: (p) => lines.report(STEPS[p.step], p.done, p.total) });
  } finally {
    lines.finish();
  }
}
