// The reads of one request's answer (issue 44's two sources): its version and its rows, under
// the same deadlines, admission slots and database guard; from the rollup, or from the daily
// rows where the source says so (src/reads/read-source.ts). A read of the rollup that fails for
// the schema is read again from the daily rows and turns the source, so that no request gets a
// 503 while an exact answer can be read. The answer (product-costs-answer.ts) decides what to
// read from what they return.

import { readAnswerVersion, type AnswerVersion } from "../reads/answer-version.ts";
import type { Sql } from "../database/client.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import type { EdgeStore } from "../reads/edges/edge-store.ts";
import type { EdgeWarmer } from "../reads/edges/edge-warmer.ts";
import { readProductCosts, type ProductCostRead } from "../reads/product-costs.ts";
import { rollupGuard, RollupUnreadableError, type SourceChoice } from "../reads/read-source.ts";
import type { ReadOptions } from "../reads/read.ts";
import type { Admission } from "./admission.ts";
import { freshReads } from "./fresh-reads.ts";
import type { AnswerKey } from "../query/answer-key.ts";

/** The reads of one request's answer. */
export interface AnswerReads {
  /** The answer's version, read before any row; null where the rows come from the daily rows (no version). */
  version(): Promise<AnswerVersion | null>;
  /** The rows: from the rollup, unless `daily` or the rollup cannot be read now; which one answered. */
  read(daily: boolean): Promise<{ daily: boolean; read: ProductCostRead }>;
}

/** The deadlines every read of a request keeps, version and rows alike (read.ts). */
export type ReadLimits = Pick<ReadOptions, "firstBatchTimeoutMs" | "connectTimeoutMs" | "silence">;

export interface AnswerReadsDeps {
  sql: Sql;
  admission: Admission;
  guard?: DatabaseGuard;
  /** None: the rollup, always. */
  source?: SourceChoice;
  limits: ReadLimits;
  /** How the rows are read: rows per batch (default 2,000), what reads of ranges keep for the next (EDGE_CACHE_MB), and what reads the rest in the background (edge-warmer.ts). */
  rows: { batchSize?: number; edges?: EdgeStore; warmer?: EdgeWarmer };
}

/** The reads of each request's answer, made once for every request. */
export function answerReads(deps: AnswerReadsDeps): (key: AnswerKey, signal: AbortSignal) => AnswerReads {
  const { sql, admission, source } = deps;
  // A failure of a read of the rollup for the schema is no problem of the database: the guard
  // does not count it (read-source.ts), the daily rows answer instead.
  const rollup = deps.guard && source ? rollupGuard(deps.guard) : deps.guard;
  const deadlines = (signal: AbortSignal): ReadOptions => ({ ...deps.limits, signal });
  // A range's version, one read shared by the requests that arrived while the one before ran.
  // Each request still waits for it in an admission slot of its own (below), so the bounds on
  // running and queued requests (and 503 OVERLOADED past them) stay what they were.
  const sharedVersion = freshReads(
    (range: AnswerKey["range"], signal) => {
      const read = () => readAnswerVersion(sql, range.firstDay, range.lastDay, deadlines(signal));
      return rollup ? rollup.run(read) : read();
    },
    (range) => range.id,
  );
  // A read of the rollup that met its schema gone: the daily rows from now on (until a check finds it again).
  const turned = (err: unknown): boolean => {
    if (!source || !(err instanceof RollupUnreadableError)) return false;
    source.rollupFailed(err);
    return true;
  };

  return (key, signal) => {
    // A slot first (admission), then the guard, then the read: src/reads/read.ts owns all three.
    const rows = (daily: boolean) =>
      readProductCosts(sql, key.query, {
        ...deadlines(signal),
        slots: admission,
        guard: daily ? deps.guard : rollup,
        batchSize: deps.rows.batchSize ?? 2000,
        rendered: key.format === "json",
        daily,
        edges: deps.rows.edges,
        warmer: deps.rows.warmer,
      });
    return {
      async version() {
        if (source && (await source.current(deps.limits.firstBatchTimeoutMs)).name === "daily") return null;
        try {
          return await admission.run(signal, () => sharedVersion(key.range, signal));
        } catch (err) {
          if (turned(err)) return null;
          throw err;
        }
      },
      async read(daily) {
        if (!daily) {
          try {
            return { daily: false, read: await rows(false) };
          } catch (err) {
            if (!turned(err)) throw err;
          }
        }
        return { daily: true, read: await rows(true) };
      },
    };
  };
}
