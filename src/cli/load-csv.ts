// `load-csv <products|product_daily_costs> <file.csv|-> [--replace]`: loads a CSV into the
// configured database (DATABASE_URL, or the embedded one in --data-dir), then refreshes.

import { accessSync, constants, statSync } from "node:fs";
import { ConfigError } from "../settings/config.ts";
import { DataError } from "../failures.ts";
import { openDatabase } from "../db/open.ts";
import { refreshWithProgress } from "../db/refresh-progress.ts";
import { loadCsv, LoadError } from "../load/load-csv.ts";
import type { Logger } from "../output/log.ts";
import { megabytes, progressLines } from "../output/progress.ts";
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
    // Fold the new rows into the totals now: the next reads are fast at once.
    const refreshed = await refreshWithProgress("load-csv", db.sql);
    logger.info("csv loaded", {
      table,
      file: name,
      rows: report.rows,
      inserted: report.inserted,
      updated: report.updated,
      replaced: replace,
      duration_ms: loadedMs,
      database: db.description,
      refresh_ms: refreshed?.ms,
    });
  } catch (err) {
    if (err instanceof LoadError) throw new DataError(`load-csv ${name}: ${err.message}; nothing was loaded`);
    throw err;
  } finally {
    await db.close(5);
  }
}
