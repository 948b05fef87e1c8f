// Every object `migrate` makes (sql/migrations/), what it is for, and what it costs the ETL's
// writers: what a DBA reads before allowing `migrate` on the ETL's database (issue 44), in
// `migrate --dry-run` (each one the database lacks) and in docs/database.md. Kept equal to what
// a migrated database holds by tests/db/migration-objects.test.ts (a new migration's object
// missing here fails it).
//
// The writers' figures are tests/bench/writers.ts's (the same writes on the contract tables
// alone and after `migrate`, 20,000 products × 60 days): tests/bench/results/2026-11-27-writers-0010.md.

import schemaObjectsQuery from "../../sql/queries/schema_objects.sql" with { type: "text" };
import schemaSql from "../../sql/schema.sql" with { type: "text" };
import type postgres from "postgres";
import type { Sql } from "../database/client.ts";

export type ObjectKind = "table" | "index" | "function" | "trigger";

export interface MigrationObject {
  kind: ObjectKind;
  name: string;
  /** The table a trigger or an index is on. */
  on?: string;
  /** The migration that makes it (the last one that changes it, for a function). */
  by: string;
  /** What it is for. */
  purpose: string;
  /** What it costs the ETL's writers; absent: nothing (writers never touch it). */
  writerCost?: string;
}

/** The writers' cost of the notes, all triggers together (one figure: they run together). */
export const NOTES_COST =
  "with the other triggers: bulk writes 1.5-5.7 µs more per affected row, a single-row autocommit upsert about 70 µs more per statement; no lock on the ETL's tables (tests/bench/results/2026-11-27-writers-0010.md)";

// Made by 0006, enabled always by 0014 (they fire whatever the session's
// session_replication_role): one that is not, or is disabled, counts as missing.
const trigger = (name: string, on: string, when: string): MigrationObject => ({
  kind: "trigger",
  name,
  on,
  by: "0014",
  purpose: `statement-level, after ${when}, in every session (enabled always): notes what the statement changed (transition tables) in product_cost_deltas`,
  writerCost: NOTES_COST,
});

const fn = (name: string, by: string, purpose: string, writerCost?: string): MigrationObject => ({ kind: "function", name, by, purpose, ...(writerCost ? { writerCost } : {}) });
const CALLED_BY_TRIGGERS = "runs in the writers' statements (counted in the triggers' cost)";

export const MIGRATION_OBJECTS: readonly MigrationObject[] = [
  // On the ETL's tables.
  {
    kind: "index",
    name: "product_daily_costs_cost_date_idx",
    on: "product_daily_costs",
    by: "0002",
    purpose: "finds a range's daily rows by date (the daily rows' reads need it too: `print-sql daily-index` makes it alone)",
    writerCost: "one index entry per row written (in the figures of the triggers)",
  },
  trigger("product_cost_deltas_on_insert", "product_daily_costs", "insert"),
  trigger("product_cost_deltas_on_update", "product_daily_costs", "update"),
  trigger("product_cost_deltas_on_delete", "product_daily_costs", "delete"),
  trigger("product_cost_deltas_on_truncate", "product_daily_costs", "truncate"),
  trigger("product_cost_deltas_on_product_update", "products", "update"),
  // The triggers' functions.
  fn("product_cost_deltas_of_insert", "0008", "the insert trigger's", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_of_update", "0008", "the update trigger's", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_of_delete", "0008", "the delete trigger's", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_of_truncate", "0006", "the truncate trigger's", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_of_products", "0006", "the products' update trigger's: a product's attributes changed", CALLED_BY_TRIGGERS),
  fn("product_cost_changes_everything", "0008", "notes that everything changed (a truncate)", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_note", "0012", "writes a statement's notes (one changed row without the general query)", CALLED_BY_TRIGGERS),
  fn("product_cost_deltas_note_general", "0012", "writes a statement's notes, per product and month", CALLED_BY_TRIGGERS),
  fn("product_cost_month_of", "0012", "a date's month, for dates of any distance", CALLED_BY_TRIGGERS),
  // The service's own.
  fn("product_cost_months_cover", "0011", "makes the months' partitions a refresh needs"),
  fn("product_cost_answer_version", "0013", "an answer's version (its ETag) from the notes and the refreshes"),
  { kind: "table", name: "schema_migrations", by: "migrate", purpose: "which migrations are applied" },
  { kind: "index", name: "schema_migrations_pkey", on: "schema_migrations", by: "migrate", purpose: "its key" },
  {
    kind: "table",
    name: "product_cost_deltas",
    by: "0006",
    purpose: "the writers' notes, until a refresh folds them (no key, no index: appended only)",
    writerCost: "the triggers append to it (in their figures)",
  },
  { kind: "table", name: "product_cost_months", by: "0011", purpose: "per product and month, the running sums the reads add up (partitioned by month; the refresh makes the partitions)" },
  { kind: "index", name: "product_cost_months_pkey", on: "product_cost_months", by: "0011", purpose: "its key" },
  { kind: "table", name: "product_cost_answers", by: "0006", purpose: "whole calendar months' answers, rendered by the refresh" },
  { kind: "index", name: "product_cost_answers_pkey", on: "product_cost_answers", by: "0006", purpose: "its key" },
  { kind: "table", name: "product_cost_refreshes", by: "0006", purpose: "the last refresh: when, how long, its window of months, a failure" },
  { kind: "index", name: "product_cost_refreshes_pkey", on: "product_cost_refreshes", by: "0006", purpose: "its key" },
  { kind: "table", name: "product_cost_folded_changes", by: "0007", purpose: "what refreshes folded per day, for answers' versions" },
  { kind: "index", name: "product_cost_folded_changes_pkey", on: "product_cost_folded_changes", by: "0007", purpose: "its key" },
];

/** An object as the catalog names it (sql/queries/schema_objects.sql). */
export interface CatalogObject {
  kind: string;
  name: string;
  on_table: string;
}

/** The objects of `sql`'s public schema besides the contract's tables. */
export async function schemaObjects(sql: Sql | postgres.TransactionSql<{}>): Promise<CatalogObject[]> {
  return await sql.unsafe<CatalogObject[]>(schemaObjectsQuery);
}

/** The objects `migrate` makes that `sql`'s database does not have. */
export async function objectsToMake(sql: Sql | postgres.TransactionSql<{}>): Promise<MigrationObject[]> {
  const present = new Set((await schemaObjects(sql)).map((o) => `${o.kind} ${o.name}`));
  return MIGRATION_OBJECTS.filter((o) => !present.has(`${o.kind} ${o.name}`));
}

// Each object as this build makes it: sql/schema.sql, pg_dump's schema of a database migrated
// by this build (tests/db/schema-file.test.ts keeps it so), one block per object under its
// "-- Name: ...; Type: ...;" header. A primary key's index is its CONSTRAINT block. pg_dump's
// session settings between blocks (SET default_tablespace ...) are left out.
const DUMP_KINDS: Readonly<Record<string, ObjectKind>> = { FUNCTION: "function", TRIGGER: "trigger", INDEX: "index", CONSTRAINT: "index", TABLE: "table" };

function dumpedDefinitions(schema: string): Map<string, string> {
  const definitions = new Map<string, string>();
  for (const block of schema.split(/^--\n(?=-- Name: )/m).slice(1)) {
    const m = /^-- Name: (.+?); Type: ([A-Z ]+); Schema: public; Owner: -\n--\n([\s\S]*)$/.exec(block);
    const kind = m && DUMP_KINDS[m[2]!];
    if (!kind) continue;
    // A function's Name is name(argument types); a trigger's, an index's or a key's is "table name".
    const name = kind === "function" ? m[1]!.slice(0, m[1]!.indexOf("(")) : m[1]!.split(" ").at(-1)!;
    const statement = m[3]!.replace(/^--\n-- PostgreSQL database dump complete[\s\S]*$/m, "").replace(/^SET \w+ = .*;$/gm, "").trim();
    definitions.set(`${kind} ${name}`, statement);
  }
  return definitions;
}

let dumped: Map<string, string> | undefined;

/**
 * The statements that make `object` ("function product_cost_answer_version") as this build has
 * it; a function or a trigger replaces one that is there (one an older migration's body left).
 */
export function currentDefinition(object: string): string {
  dumped ??= dumpedDefinitions(schemaSql);
  const statement = dumped.get(object);
  if (statement === undefined) throw new Error(`sql/schema.sql has no ${object}`);
  // ONLY: pg_dump adds a partitioned table's key before its partitions; made again, the key
  // goes onto the partitions the refresh has made since.
  return statement.replace(/^CREATE (FUNCTION|TRIGGER) /, "CREATE OR REPLACE $1 ").replace(/^ALTER TABLE ONLY /, "ALTER TABLE ");
}
