// A logger that keeps its lines in memory, parsed, so that tests can assert what was logged.

import { createLogger, type Level, type Logger } from "../../src/ops/log.ts";

export function memoryLogger(level: Level = "debug"): Logger & { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = createLogger({ level, format: "json", write: (l) => lines.push(JSON.parse(l)) });
  return Object.assign(logger, { lines });
}
