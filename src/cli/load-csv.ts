// `load-csv <products|product_daily_costs> <file.csv|-> [--replace]`: loads a CSV into the
// configured database (DATABASE_URL, or the embedded one in --data-dir), then refreshes the
// rollup where `migrate` built it. Once the load commits, the command's answer is "loaded":
// nothing after the commit (the refresh, a signal during it) may make it exit otherwise, or an
// ETL would retry or alert on rows that are in (issue 52).

import { accessSync, constants, statSync } from "node:fs";
import { ConfigError } from "../settings/config.ts";
import { DataError } from "../failures.ts";
import { openDatabase } from "../backends/open.ts";
import { pendingMigrations } from "../rollup/migrations.ts";
import { refreshWithProgress } from "../rollup/refresh-progress.ts";
import { refreshProblem } from "../rollup/refresh.ts";
import type { Sql } from "../database/client.ts";
import { loadCsv, LoadError } from "../load/load-csv.ts";
import type { Logger } from "../ops/log.ts";
import { megabytes, progressLines } from "../ops/progress.ts";
import type { CommandLine } from "./command-line.ts";

/**
 * The file's text in pieces (stdin for "-"), strict UTF-8, counting the bytes read. A file
 * that cannot be opened is a configuration error, reported before the database is touched.
 */
function openInput(file: string): { pieces: AsyncIterable<string>; size: number | undefined; bytesRead: () => number } {
  let stream: ReadableStream<Uint8Array>;
  let size: number | undefined;
  if (file === "-") stream = Bun.stdin.stream();
  else {
    try {
      const stat = statSync(file);
      if (stat.isDirectory()) throw Object.assign(new Error(), { code: "EISDIR" });
      accessSync(file, constants.R_OK);
      // A pipe (`<(gunzip -c costs.csv.gz)`) has no size: progress then counts rows, as for stdin.
      size = stat.isFile() ? stat.size : undefined;
    } catch (err) {
      throw new ConfigError(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    stream = Bun.file(file).stream();
  }
  let bytes = 0;
  async function* pieces(): AsyncIterable<string> {
    const decoder = new TextDecoder("utf-8", { fatal: true });
    try {
      for await (const chunk of stream) {
        bytes += chunk.byteLength;
        yield decoder.decode(chunk, { stream: true });
      }
      yield decoder.decode();
    } catch (err) {
      if (err instanceof TypeError) throw new LoadError(`the file is not UTF-8 text (a byte sequence near byte ${bytes} is not UTF-8)`);
      throw err;
    }
  }
  return { pieces: pieces(), size, bytesRead: () => bytes };
}

export async function runLoadCsv({ config, own, args }: CommandLine, logger: Logger): Promise<void> {
  const [table, file] = args as readonly [string, string]; // both required: read as the table's args
  const replace = own.get("replace") === "true";
  const input = openInput(file);
  const name = file === "-" ? "stdin" : file;
  const db = await openDatabase(config, false);
  const started = performance.now();
  try {
    const progress = progressLines("load-csv", { unit: input.size === undefined ? (n) => `${n} rows` : megabytes });
    const report = await loadCsv(db.sql, table, input.pieces, {
      replace,
      // Until the load returns the step is not done, though every byte may have been read.
      onBatch: (rows) =>
        input.size === undefined
          ? progress.report(`loading ${name}`, rows, undefined)
          : progress.report(`loading ${name}`, Math.min(input.bytesRead(), input.size - 1), input.size, `${rows} rows`),
    });
    // The line that ends the step, also for stdin, whose size is known only now.
    if (input.size !== undefined) progress.report(`loading ${name}`, input.size, input.size, `${report.rows} rows`);
    else progress.report(`loading ${name}`, report.rows, report.rows);
    progress.finish();
    const loadedMs = Math.round(performance.now() - started);
    const refreshed = await refreshAfterLoad(db.sql);
    logger.info("csv loaded", {
      table,
      file: name,
      rows: report.rows,
      inserted: report.inserted,
      updated: report.updated,
      replaced: replace,
      duration_ms: loadedMs,
      database: db.description,
      refresh_ms: refreshed.ms,
    });
    if (refreshed.failure) {
      logger.warn("the rows are committed; the refresh after them failed", {
        ...refreshed.failure,
        then: "nothing to load again: reads add the rows up exactly until the next refresh (the timer's, or `product-cost-export refresh`) folds them in",
      });
    }
  } catch (err) {
    if (err instanceof LoadError) throw new DataError(`load-csv ${name}: ${err.message}; nothing was loaded`);
    throw err;
  } finally {
    await db.close(5);
  }
}

/**
 * Folds the committed rows into the rollup now, so that the next reads are fast at once; never
 * throws. A database without this build's rollup (the contract's tables alone, or an upgrade
 * before `migrate`) has nothing to refresh: its reads add up the daily rows, and `migrate`
 * folds what it finds. A failure, or SIGTERM/SIGINT while it runs (its statement is cancelled
 * and its lock released, as for `refresh`), is returned for the log: the rows are in either way.
 */
async function refreshAfterLoad(sql: Sql): Promise<{ ms?: number; failure?: { problem?: string; cause: string; fix?: string } }> {
  const stop = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => stop.abort(signal);
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  try {
    if ((await pendingMigrations(sql)).length > 0) return {};
    const refreshed = await refreshWithProgress("load-csv", sql, { signal: stop.signal });
    return { ms: refreshed?.ms };
  } catch (err) {
    const found = refreshProblem(err);
    return { failure: found ? { problem: found.code, cause: found.cause, fix: found.fix } : { cause: err instanceof Error ? err.message : String(err) } };
  } finally {
    // A second signal, once the refresh is over, stops the command as before.
    process.removeListener("SIGTERM", onSignal);
    process.removeListener("SIGINT", onSignal);
  }
}
