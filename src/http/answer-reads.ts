// Where an answer's version and rows are read from, for one request (issue 44's two sources,
// issue 45's one place for the read's options): the version and the rows under the same
// deadlines, admission slots and database guard; from the rollup, or from the daily rows where
// the source says so (src/db/read-source.ts). A read of the rollup that fails for the schema is
// read again from the daily rows and turns the source, so that no request gets a 503 while an
// exact answer can be read.

import { readAnswerVersion } from "../db/answer-version.ts";
import type { Sql } from "../db/client.ts";
import type { DatabaseGuard } from "../db/database-guard.ts";
import { readProductCosts } from "../db/product-costs.ts";
import { rollupGuard, RollupUnreadableError, type SourceChoice } from "../db/read-source.ts";
import type { ReadOptions } from "../db/read.ts";
import type { SilenceWatch } from "../db/silence.ts";
import type { Admission } from "./admission.ts";
import type { AnswerKey } from "./answer-key.ts";
import { freshReads } from "./fresh-reads.ts";
import type { AnswerSources } from "./product-costs-answer.ts";

export interface AnswerReadsDeps {
  sql: Sql;
  admission: Admission;
  guard?: DatabaseGuard;
  /** None: the rollup, always. */
  source?: SourceChoice;
  firstBatchTimeoutMs: number;
  connectTimeoutMs?: number;
  silence?: SilenceWatch;
  batchSize?: number;
}

/** The reads of a request's answer: its version (none from the daily rows) and its rows. */
export type AnswerReads = (key: AnswerKey, signal: AbortSignal) => Pick<AnswerSources, "version" | "read">;

export function answerReads(deps: AnswerReadsDeps): AnswerReads {
  const { sql, admission, source } = deps;
  // A failure of a read of the rollup for the schema is no problem of the database: the guard
  // does not count it (read-source.ts), the daily rows answer instead.
  const rollup = deps.guard && source ? rollupGuard(deps.guard) : deps.guard;
  // The deadlines every read of a request keeps, version and rows alike.
  const deadlines = (signal: AbortSignal): ReadOptions => ({ firstBatchTimeoutMs: deps.firstBatchTimeoutMs, connectTimeoutMs: deps.connectTimeoutMs, silence: deps.silence, signal });
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
    // A slot first (admission), then the guard, then the read: src/db/read.ts owns all three.
    const rows = (daily: boolean) =>
      readProductCosts(sql, key.query, {
        ...deadlines(signal),
        slots: admission,
        guard: daily ? deps.guard : rollup,
        batchSize: deps.batchSize ?? 2000,
        rendered: key.format === "json",
        daily,
      });
    return {
      async version() {
        if (source && (await source.current(deps.firstBatchTimeoutMs)).name === "daily") return null;
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
