// The version of the answers for a range (sql/queries/answer_version.sql, migrations 0007, 0009):
// what an ETag names. It changes exactly when a committed write changes the range's days, a
// product's attributes or everything, never when a write touches only other days or a
// refresh only folds. Read alone (one statement, shared by the requests that arrive together)
// for the conditional requests and the answer cache; read again in the rows' own snapshot
// (product-costs.ts), which is the version a 200's ETag names and its body is kept under.

import answerVersionQuery from "../../sql/queries/answer_version.sql" with { type: "text" };
import type { Sql } from "../database/client.ts";
import { readRow, type ReadOptions, type Statement } from "./read.ts";

export interface AnswerVersion {
  /** Opaque; equal for two reads exactly when the answers (every segment) are the same. */
  version: string;
  /** When a write last changed what the range shows (ISO 8601, UTC, by the writer's clock); null when none is recorded. */
  changedAt: string | null;
}

/** The statement that reads the version of the answers for [firstDay, lastDay]. */
export function answerVersionStatement(firstDay: string, lastDay: string): Statement {
  return { text: answerVersionQuery, params: [firstDay, lastDay] };
}

/** The version of the answers for [firstDay, lastDay] (YYYY-MM-DD, inclusive), any segment. */
export async function readAnswerVersion(
  sql: Sql,
  firstDay: string,
  lastDay: string,
  options: ReadOptions = { firstBatchTimeoutMs: 30_000 },
): Promise<AnswerVersion> {
  return versionOf((await readRow(sql, answerVersionStatement(firstDay, lastDay), options))!);
}

/** The version in the row of answer_version.sql (its columns' bytes). */
export function versionOf(row: readonly (Buffer | null)[]): AnswerVersion {
  return { version: row[0]!.toString(), changedAt: row[1] ? row[1].toString() : null };
}
