// What `migrate` and `refresh` share: run the work on the opened database, turn a failure an
// operator can fix into one line with its cause and fix (a peer that is not PostgreSQL told
// apart first), and close the pool: with a grace after success, at once after a failure
// (nothing is worth waiting for then, and a connection attempt under way would hold the exit).

import type { Database } from "../backends/database.ts";
import { identifyPeer } from "../database/not-postgresql.ts";
import type { DatabaseProblem } from "../database/problems.ts";

export async function onDatabase(db: Database, verb: string, problemOf: (err: unknown) => DatabaseProblem | undefined, work: () => Promise<void>): Promise<void> {
  let failed = false;
  try {
    await work();
  } catch (err) {
    failed = true;
    const found = problemOf(await identifyPeer(err, db.sql));
    if (found) throw new Error(`cannot ${verb}: ${found.cause}; ${found.fix}`);
    throw err;
  } finally {
    await db.close(failed ? 0 : 5);
  }
}
