// The version of the answers for a range (sql/queries/answer_version.sql, migration 0007):
// what an ETag names. It changes exactly when a committed write changes the range's days, a
// product's attributes or everything, never when a write touches only other days or a
// refresh only folds. Read before the rows, so it never names a state newer than they are.

import answerVersionQuery from "../../sql/queries/answer_version.sql" with { type: "text" };
import type { Sql } from "./client.ts";

/** The version of the answers for [firstDay, lastDay] (YYYY-MM-DD, inclusive), any segment. */
export async function readAnswerVersion(sql: Sql, firstDay: string, lastDay: string): Promise<string> {
  const [row] = (await sql.unsafe(answerVersionQuery, [firstDay, lastDay], { prepare: true })) as unknown as { version: string }[];
  return row!.version;
}
