// The version of the answers for a range (sql/queries/answer_version.sql, migration 0007):
// what an ETag names. It changes exactly when a committed write changes the range's days, a
// product's attributes or everything, never when a write touches only other days or a
// refresh only folds. Read before the rows, so it never names a state newer than they are.

import answerVersionQuery from "../../sql/queries/answer_version.sql" with { type: "text" };
import type { Sql } from "./client.ts";

export interface AnswerVersion {
  /** Opaque; equal for two reads exactly when the answers (every segment) are the same. */
  version: string;
  /** When a write last changed what the range shows, by the writer's clock; null when none is recorded. */
  changedAt: Date | null;
}

/** The version of the answers for [firstDay, lastDay] (YYYY-MM-DD, inclusive), any segment. */
export async function readAnswerVersion(sql: Sql, firstDay: string, lastDay: string): Promise<AnswerVersion> {
  const [row] = (await sql.unsafe(answerVersionQuery, [firstDay, lastDay], { prepare: true })) as unknown as { version: string; changed_at: Date | null }[];
  return { version: row!.version, changedAt: row!.changed_at };
}
