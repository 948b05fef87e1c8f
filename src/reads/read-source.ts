// Where reads take their rows from (issue 44): the rollup, where it is present, current for this
// build (every migration applied) and readable by the service's role; otherwise the daily rows
// themselves (sql/queries/product_costs_daily.sql): a database as the ETL left it, a role that
// may SELECT the two contract tables alone, a standby of a primary nobody may migrate, or the
// minutes of an upgrade before `migrate` commits. Both give the same rows and bytes; the rollup
// is faster at long ranges and gives answers a version (ETags, kept answers).
//
// The choice is made before the first read (the start's readiness check, or that read itself,
// within its deadline) and checked again in the background once RECHECK_MS old (catalog reads of
// a few rows), so no request waits for it after the first. A read of the rollup that fails for
// the schema (a table dropped, a grant revoked) is read again from the daily rows at once and
// turns the choice: a change of source never costs a request a 503. A change is logged once.

import type { Logger } from "../ops/log.ts";
import type { Sql } from "../database/client.ts";
import type { DatabaseGuard } from "../database/database-guard.ts";
import rollupUnreadableQuery from "../../sql/queries/rollup_unreadable.sql" with { type: "text" };
import { answerVersionStatement, readPathProbes } from "./product-costs.ts";
import { DatabaseDeadlineError } from "../database/errors.ts";
import { MIGRATIONS, pendingMigrations } from "../rollup/migrations.ts";
import { identifyPeer } from "../database/not-postgresql.ts";
import type { Statement } from "./read.ts";
import postgres from "postgres";

export type SourceName = "rollup" | "daily";

export interface ReadSource {
  name: SourceName;
  /** Why the daily rows (which migrations are missing, what the role may not read). */
  why?: string;
}

/** How long a source decision stands before it is checked again. */
export const RECHECK_MS = 5_000;

/** The objects a read of the rollup uses (migrations 0006 to 0014), each of which the role must be able to read. */
const ROLLUP_TABLES = ["product_cost_months", "product_cost_deltas", "product_cost_answers", "product_cost_refreshes", "product_cost_folded_changes"];

/** SQLSTATEs of a statement that names what the database does not have, or may not be read: the rollup's, here. */
const SCHEMA_CODES = new Set(["42P01", "42703", "42883", "42501"]);

/** A failure of a read of the rollup that the daily rows may not meet. */
function isSchemaFailure(err: unknown): boolean {
  return err instanceof postgres.PostgresError && SCHEMA_CODES.has(err.code);
}

/** A read of the rollup met its schema missing or unreadable (`cause`): the daily rows answer instead. */
export class RollupUnreadableError extends Error {
  constructor(override readonly cause: Error) {
    super(`a read of the rollup failed: ${cause.message}`);
  }
}

/**
 * `guard` for reads of the rollup: a failure for the schema leaves it as RollupUnreadableError,
 * which is no problem of the database (the daily rows answer at once), so the guard neither
 * logs "database not usable" for it nor counts it against readiness.
 */
export function rollupGuard(guard: DatabaseGuard): DatabaseGuard {
  return {
    ...guard,
    run: (attempt, role) => guard.run(() => attempt().catch((err) => Promise.reject(isSchemaFailure(err) ? new RollupUnreadableError(err) : err)), role),
  };
}

/**
 * What `sql`'s database and role offer now: the rollup when every migration of this build is
 * applied and its tables are there and readable (catalog reads: they wait for no lock a writer
 * holds), and, with `probe`, the statements of its read path run (over ranges of year 1, which
 * hold no costs: a function or column dropped by hand fails here, not in a request); otherwise
 * the daily rows, and why. Throws when the database cannot be read at all (a server that is not
 * PostgreSQL as NotPostgresqlError).
 */
export async function checkSource(sql: Sql, probe: boolean): Promise<ReadSource> {
  // A server that is not PostgreSQL is told apart from one that is down (not-postgresql.ts).
  return await inspect(sql, probe).catch(async (err) => Promise.reject(await identifyPeer(err, sql)));
}

async function inspect(sql: Sql, probe: boolean): Promise<ReadSource> {
  const daily = (why: string): ReadSource => ({ name: "daily", why });
  // The catalog first: a table the role may not read is never read (each refusal would be an
  // ERROR line in PostgreSQL's log, every RECHECK_MS, on a database served by SELECT alone).
  const [tables] = await sql.unsafe<{ missing: string[]; unreadable: string[] }[]>(rollupUnreadableQuery, [["schema_migrations", ...ROLLUP_TABLES]]);
  const { missing, unreadable } = tables!;
  if (unreadable.length > 0) return daily(`the role may not read ${unreadable.join(", ")}`);
  const pending = missing.includes("schema_migrations") ? MIGRATIONS.map((m) => m.version) : await pendingMigrations(sql);
  if (pending.length > 0) {
    const list = pending.length > 3 ? `${pending[0]} to ${pending.at(-1)}` : pending.join(", ");
    return daily(`migration${pending.length > 1 ? "s" : ""} ${list} of this build ${pending.length > 1 ? "are" : "is"} not applied`);
  }
  if (missing.length > 0) return daily(`the rollup's ${missing.join(", ")} ${missing.length > 1 ? "are" : "is"} missing`);
  if (probe) {
    try {
      for (const statement of rollupProbes()) await sql.unsafe(statement.text, statement.params);
    } catch (err) {
      if (!isSchemaFailure(err)) throw err;
      return daily(`a read of the rollup fails: ${(err as Error).message}`);
    }
  }
  return { name: "rollup" };
}

/** The statements of the rollup's read path, over ranges of year 1 (no costs there). */
function rollupProbes(): Statement[] {
  return [answerVersionStatement("0001-01-01", "0001-01-31"), ...readPathProbes()];
}

export interface SourceChoice {
  /**
   * The source for a read now: the last decision (checked again in the background once it is
   * RECHECK_MS old); before the first, the check, waited for up to `waitMs` (then
   * DatabaseDeadlineError). A check that fails (the database away) gives the rollup: the read
   * then fails as any read does, with its 503.
   */
  current(waitMs: number): Promise<ReadSource>;
  /** What a check elsewhere found (the readiness check runs the same one). */
  observed(source: ReadSource): void;
  /** A read of the rollup failed for the schema: the daily rows until a check finds the rollup again. */
  rollupFailed(err: RollupUnreadableError): void;
  /** The last decision, for /metrics (undefined before the first). */
  last(): ReadSource | undefined;
}

/**
 * The source, checked on `sql` at most every RECHECK_MS, through `guard` (a database that cannot
 * be reached gets no more connection attempts for it than for the reads); a change logged once.
 */
export function sourceChoice(sql: Sql, logger: Logger, guard?: DatabaseGuard, now: () => number = () => performance.now()): SourceChoice {
  let decided: ReadSource | undefined;
  let checkedAt = -Infinity;
  let checking: Promise<ReadSource | undefined> | undefined;
  // After a read of the rollup failed, it is taken again only once its statements run (a
  // function dropped by hand leaves every table in place: without the probe, the source would
  // turn back and forth every RECHECK_MS).
  let probe = false;
  // Logged: the daily rows from the first decision on, and every change after it (the rollup
  // at the start is the ordinary case, and says nothing).
  const settle = (next: ReadSource) => {
    if (decided?.name !== next.name) {
      if (next.name === "daily") logger.warn("reading the daily rows directly", { source: "daily", why: next.why, ...DAILY_ADVICE });
      else if (decided) logger.info("reading the rollup", { source: "rollup", was: decided.why });
    }
    decided = next;
    checkedAt = now();
    return next;
  };
  // One check at a time; one that never ends (a pool that hangs) is given up after RECHECK_MS,
  // so that the next turn checks again.
  const check = () => {
    const asked = probe;
    const run = () => checkSource(sql, asked);
    return (checking ??= Promise.race([
      (guard ? guard.run(run, "readiness") : run()).then((found) => {
        if (asked && found.name === "rollup") probe = false;
        return settle(found);
      }),
      Bun.sleep(RECHECK_MS).then(() => undefined),
    ])
      .catch(() => undefined)
      .finally(() => (checking = undefined)));
  };
  return {
    async current(waitMs) {
      if (decided) {
        if (now() - checkedAt >= RECHECK_MS) void check();
        return decided;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const deadline = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new DatabaseDeadlineError(waitMs)), waitMs)));
      try {
        return (await Promise.race([check(), deadline])) ?? decided ?? { name: "rollup" };
      } finally {
        clearTimeout(timer);
      }
    },
    // (The readiness check runs the rollup's statements: it may clear a failure's doubt.)
    observed(source) {
      if (source.name === "rollup") probe = false;
      settle(source);
    },
    rollupFailed(err) {
      probe = true;
      settle({ name: "daily", why: err.message });
    },
    last: () => decided,
  };
}

/** What the warning says an operator gains by `migrate`, and what the daily rows need. */
export const DAILY_ADVICE = {
  gain: "exact either way; `migrate` (as the tables' owner) builds the rollup: a year of 50,000 products in 0.3 s instead of 3.1 s, ETags and kept answers (docs/performance.md, issue 44's benchmark)",
  index: "the daily rows are read by the cost_date index: `product-cost-export print-sql daily-index` prints the SQL a DBA can run alone",
};
