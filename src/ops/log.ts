// Structured logging: one JSON object per line on stdout (or readable text for a
// terminal with LOG_FORMAT=pretty). Fields are the caller's; secrets never reach here.

import { fstatSync } from "node:fs";

export type Level = "debug" | "info" | "warn" | "error";
const RANK: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export type Logger = Record<Level, (msg: string, fields?: Record<string, unknown>) => void>;

export interface LoggerOptions {
  level: Level;
  format: "json" | "pretty";
  write?: (line: string) => void;
  /** Under journald: each line starts with its syslog priority, `<3>` … `<7>`, which journald reads and strips. */
  journald?: boolean;
}

/** syslog priorities (sd-daemon(3)): err, warning, info, debug. */
const PRIORITY: Record<Level, number> = { error: 3, warn: 4, info: 6, debug: 7 };

/**
 * Whether stdout (or `fd`) is journald's stream: systemd sets JOURNAL_STREAM to its device and
 * inode (a shell started from the service's environment would inherit the variable, not the stream).
 */
export function stdoutIsJournal(env: Record<string, string | undefined> = process.env, fd = 1): boolean {
  const stream = env.JOURNAL_STREAM;
  if (!stream) return false;
  try {
    const { dev, ino } = fstatSync(fd);
    return stream === `${dev}:${ino}`;
  } catch {
    return false;
  }
}

/** An Error as log fields: its class, message and code, never a stack in the JSON line's message. */
export function errorFields(err: unknown): Record<string, unknown> {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return { error: err.message, error_type: err.constructor.name, ...(code !== undefined ? { error_code: code } : {}) };
  }
  return { error: String(err) };
}

export function createLogger(options: LoggerOptions): Logger {
  const write = options.write ?? ((line: string) => process.stdout.write(line + "\n"));
  const min = RANK[options.level];
  const prefix = (level: Level) => (options.journald ? `<${PRIORITY[level]}>` : "");
  const emit = (level: Level, msg: string, fields?: Record<string, unknown>) => {
    if (RANK[level] < min) return;
    const time = new Date().toISOString();
    if (options.format === "pretty") {
      const extra = fields
        ? Object.entries(fields).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" ")
        : "";
      write(`${prefix(level)}${time} ${level.toUpperCase().padEnd(5)} ${msg}${extra ? " " + extra : ""}`);
    } else {
      write(prefix(level) + JSON.stringify({ time, level, msg, ...fields }));
    }
  };
  const logger = {} as Logger;
  for (const level of Object.keys(RANK) as Level[]) logger[level] = (msg, fields) => emit(level, msg, fields);
  return logger;
}
