// Applies the SQL files of sql/migrations in order, each once, recorded in
// schema_migrations. Safe to run twice, concurrently (an advisory lock serialises
// runners) and on a database where the ETL already created the contract tables.

import readersFollowSql from "../../sql/roles/readers-follow.sql" with { type: "text" };
import appliedSql from "../../sql/migrate/applied.sql" with { type: "text" };
import lockSql from "../../sql/migrate/lock.sql" with { type: "text" };
import missingObjectsSql from "../../sql/migrate/missing_objects.sql" with { type: "text" };
import noteEverythingSql from "../../sql/migrate/note_everything.sql" with { type: "text" };
import noTimeoutSql from "../../sql/migrate/no_timeout.sql" with { type: "text" };
import recordSql from "../../sql/migrate/record.sql" with { type: "text" };
import recordExistsSql from "../../sql/migrate/record_exists.sql" with { type: "text" };
import recordTableSql from "../../sql/migrate/record_table.sql" with { type: "text" };
import versionsSql from "../../sql/migrate/versions.sql" with { type: "text" };
import m0001 from "../../sql/migrations/0001_contract_tables.sql" with { type: "text" };
import m0002 from "../../sql/migrations/0002_daily_costs_by_date.sql" with { type: "text" };
import m0003 from "../../sql/migrations/0003_period_cost_rollup.sql" with { type: "text" };
import m0004 from "../../sql/migrations/0004_rollup_in_output_order.sql" with { type: "text" };
import m0005 from "../../sql/migrations/0005_rollup_v2.sql" with { type: "text" };
import m0006 from "../../sql/migrations/0006_rollup_v3.sql" with { type: "text" };
import m0007 from "../../sql/migrations/0007_answer_versions.sql" with { type: "text" };
import m0008 from "../../sql/migrations/0008_refresh_record.sql" with { type: "text" };
import m0009 from "../../sql/migrations/0009_answer_version_function.sql" with { type: "text" };
import m0010 from "../../sql/migrations/0010_single_row_notes.sql" with { type: "text" };
import m0011 from "../../sql/migrations/0011_months_by_month.sql" with { type: "text" };
import m0012 from "../../sql/migrations/0012_notes_of_any_date.sql" with { type: "text" };
import m0013 from "../../sql/migrations/0013_months_window.sql" with { type: "text" };
import m0014 from "../../sql/migrations/0014_notes_always.sql" with { type: "text" };
import indexBuildProgressSql from "../../sql/queries/index_build_progress.sql" with { type: "text" };
import { createHash } from "node:crypto";
import type postgres from "postgres";
import { indexBuildDetail, type IndexBuildProgress } from "../ops/progress.ts";
import type { Sql } from "../database/client.ts";
import { currentDefinition, MIGRATION_OBJECTS, objectsToMake, type MigrationObject, type ObjectKind } from "./migration-objects.ts";

export interface Migration {
  version: string;
  name: string;
  sql: string;
  /**
   * A later migration that removes everything this one makes: when both are pending, this
   * one is recorded as applied without being run (0003 and 0004 built a rollup over every
   * daily row, which 0005 drops, and 0006 drops 0005's: work for nothing on a large database).
   */
  supersededBy?: string;
  /**
   * Tables (and `table.column`s added to an earlier migration's table) this migration makes
   * and can make again (its SQL creates only what is missing): when one is gone from a
   * database that has the migration (dropped by hand, or the table made again by an earlier
   * migration's restore), `migrate` runs it again instead of leaving every read to fail.
   * Only tables and columns: other objects are made again alone (remakeSteps).
   */
  restores?: readonly string[];
}

export const MIGRATIONS: readonly Migration[] = [
  { version: "0001", name: "contract_tables", sql: m0001 },
  { version: "0002", name: "daily_costs_by_date", sql: m0002 },
  { version: "0003", name: "period_cost_rollup", sql: m0003, supersededBy: "0006" },
  { version: "0004", name: "rollup_in_output_order", sql: m0004, supersededBy: "0006" },
  { version: "0005", name: "rollup_v2", sql: m0005, supersededBy: "0006" },
  {
    version: "0006",
    name: "rollup_v3",
    sql: m0006,
    restores: ["product_cost_deltas", "product_cost_months", "product_cost_answers", "product_cost_refreshes"],
  },
  { version: "0007", name: "answer_versions", sql: m0007, restores: ["product_cost_folded_changes", "product_cost_deltas.noted_at"] },
  { version: "0008", name: "refresh_record", sql: m0008, restores: ["product_cost_refreshes.started_at"] },
  { version: "0009", name: "answer_version_function", sql: m0009 },
  { version: "0010", name: "single_row_notes", sql: m0010 },
  // Once 0006's restore has made the months again, 0011 partitions them again (its SQL does so
  // to a months table that is not partitioned, and needs one there).
  { version: "0011", name: "months_by_month", sql: m0011, restores: ["product_cost_months"] },
  { version: "0012", name: "notes_of_any_date", sql: m0012 },
  { version: "0013", name: "months_window", sql: m0013, restores: ["product_cost_refreshes.window_first"] },
  { version: "0014", name: "notes_always", sql: m0014 },
];

// Any fixed number: all runners of `migrate` take the same lock.
const MIGRATION_LOCK_ID = 74_201_311;

function checksum(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

export class MigrationError extends Error {
  override name = "MigrationError";
}

/** One thing `migrate` does (or, with --dry-run, would do). */
export interface MigrationStep {
  version: string;
  name: string;
  /**
   * run: apply its SQL; record: note it as applied without running it (superseded); restore:
   * run it again to make dropped tables; remake: make one object of it again, as this build
   * has it (`version` made it last).
   */
  action: "run" | "record" | "restore" | "remake";
  /** For restore: the tables that are missing. */
  tables?: string[];
  /** For remake: the object ("function product_cost_answer_version"). */
  object?: string;
}

export interface MigrateOptions {
  /** Called before each step runs. */
  onStepStart?: (step: MigrationStep) => void;
  /** Called after each step, with how long it took. */
  onStepDone?: (step: MigrationStep, ms: number) => void;
}

/**
 * The steps that bring a database to `migrations`, given what it has applied (version →
 * checksum). Throws when an applied migration's SQL was changed since.
 */
async function planSteps(tx: postgres.TransactionSql<{}>, migrations: readonly Migration[], done: Map<string, string>): Promise<MigrationStep[]> {
  const pending = new Set(migrations.filter((m) => !done.has(m.version)).map((m) => m.version));
  const steps: MigrationStep[] = [];
  for (const m of migrations) {
    const previous = done.get(m.version);
    if (previous !== undefined) {
      if (previous !== checksum(m.sql)) throw new MigrationError(`migration ${m.version}_${m.name} was changed after it was applied`);
      const missing = await missingTables(tx, m.restores ?? []);
      if (missing.length > 0) steps.push({ version: m.version, name: m.name, action: "restore", tables: missing });
      continue;
    }
    steps.push({ version: m.version, name: m.name, action: m.supersededBy && pending.has(m.supersededBy) ? "record" : "run" });
  }
  return [...steps, ...(await remakeSteps(tx, migrations, done, steps))];
}

// Functions first (a trigger names its function), then triggers, then indexes.
const REMAKE_ORDER: readonly ObjectKind[] = ["function", "trigger", "index"];

/**
 * The objects other than tables of applied migrations that the database lacks (dropped by hand),
 * and those a restore below makes as they were before a later migration changed them: each made
 * again alone, from sql/schema.sql (currentDefinition). Running their whole migration again,
 * as a table's restore does, would be wrong for most: 0006 makes the notes' functions as they
 * were before 0008 and 0012 changed them (its restore of a table did so: the ETL's writes of a
 * row past 294276 AD failed again), 0010 renames a function that is there, 0013 notes a rebuild.
 * An object that a migration run in this plan makes is left to it.
 */
async function remakeSteps(tx: postgres.TransactionSql<{}>, migrations: readonly Migration[], done: Map<string, string>, planned: readonly MigrationStep[]): Promise<MigrationStep[]> {
  // A restored table comes back with its key (and no table of a restore has a trigger).
  const restored = new Set(planned.flatMap((s) => s.tables ?? []));
  const remade = (o: MigrationObject) => o.kind !== "table" && done.has(o.by) && !(o.on && restored.has(o.on));
  const missing = (await objectsToMake(tx)).filter(remade);
  // A restore's `create or replace`s: of a function or trigger that a later migration changed.
  const reverted = planned
    .filter((s) => s.action === "restore")
    .flatMap((s) => {
      const text = migrations.find((m) => m.version === s.version)!.sql;
      return MIGRATION_OBJECTS.filter((o) => remade(o) && o.by > s.version && new RegExp(`\\b${o.kind} ${o.name}\\b`, "i").test(text));
    });
  const objects = [...new Set([...missing, ...reverted])].sort((a, b) => REMAKE_ORDER.indexOf(a.kind) - REMAKE_ORDER.indexOf(b.kind));
  return objects.map((o) => ({ version: o.by, name: migrations.find((m) => m.version === o.by)!.name, action: "remake", object: `${o.kind} ${o.name}` }));
}

/** What a remake step runs: the object as this build has it; after a trigger, a note of what it missed. */
function remakeSql(object: string): string {
  return currentDefinition(object) + (object.startsWith("trigger ") ? `;\n${noteEverythingSql}` : "");
}

async function appliedChecksums(tx: postgres.TransactionSql<{}>): Promise<Map<string, string>> {
  const rows = await tx.unsafe<{ version: string; checksum: string }[]>(appliedSql);
  return new Map(rows.map((r) => [r.version, r.checksum]));
}

/**
 * Applies what is missing, in one transaction; returns the versions applied by this call
 * ("0006 (restored product_cost_months)" for one run again to restore a dropped table, "0013
 * (made again function product_cost_answer_version)" for an object made again alone).
 * `migrations` is for tests that need a database as an older release left it (a prefix of
 * MIGRATIONS).
 */
export async function migrate(sql: Sql, migrations: readonly Migration[] = MIGRATIONS, options: MigrateOptions = {}): Promise<string[]> {
  const applied: string[] = [];
  await sql.begin(async (tx) => {
    await tx.unsafe(lockSql, [MIGRATION_LOCK_ID]);
    await tx.unsafe(noTimeoutSql);
    await tx.unsafe(recordTableSql);
    const byVersion = new Map(migrations.map((m) => [m.version, m]));
    for (const step of await planSteps(tx, migrations, await appliedChecksums(tx))) {
      const m = byVersion.get(step.version)!;
      options.onStepStart?.(step);
      const started = performance.now();
      if (step.action === "remake") await tx.unsafe(remakeSql(step.object!));
      else if (step.action !== "record") await tx.unsafe(m.sql);
      if (step.action === "run" || step.action === "record") {
        await tx.unsafe(recordSql, [m.version, m.name, checksum(m.sql)]);
      }
      options.onStepDone?.(step, performance.now() - started);
      applied.push(appliedAs(step));
    }
    // The tables made or made again go to whoever reads the daily rows (the serving role).
    if (applied.length > 0) await tx.unsafe(readersFollowSql);
  });
  return applied;
}

/** A step as migrate() reports it: "0006 (restored product_cost_months)", "0013 (made again function ...)". */
function appliedAs(step: MigrationStep): string {
  if (step.action === "restore") return `${step.version} (restored ${step.tables!.join(", ")})`;
  return step.action === "remake" ? `${step.version} (made again ${step.object})` : step.version;
}

/** What migrate() would do, without changing anything (`migrate --dry-run`). */
export async function plannedMigrations(sql: Sql, migrations: readonly Migration[] = MIGRATIONS): Promise<MigrationStep[]> {
  return sql.begin("read only", async (tx) => {
    const [exists] = await tx.unsafe<{ ok: boolean }[]>(recordExistsSql);
    return planSteps(tx, migrations, exists?.ok ? await appliedChecksums(tx) : new Map());
  }) as Promise<MigrationStep[]>;
}

async function missingTables(tx: postgres.TransactionSql<{}>, tables: readonly string[]): Promise<string[]> {
  if (tables.length === 0) return [];
  // "table" or "table.column"; a missing table's columns are missing too.
  const rows = await tx.unsafe<{ name: string }[]>(missingObjectsSql, [tables as string[]]);
  return rows.map((r) => r.name);
}

/**
 * What `migrate` would do to this database, in one line ("0011 (months_by_month), 0012
 * (notes_of_any_date)", "0012 (make again trigger product_cost_deltas_on_insert)"), or
 * undefined when it is at this build's schema: what a refresh says before it refuses to run on
 * another (refresh.ts). An object dropped by hand counts: a notes' trigger dropped leaves writes
 * unnoted, and a refresh that folded on would keep the rollup behind the data without a word
 * (about 10 ms: the timer's every minute can afford it).
 */
export async function migrationsToApply(sql: Sql): Promise<string | undefined> {
  const steps = await plannedMigrations(sql);
  if (steps.length === 0) return undefined;
  const said = (step: MigrationStep) =>
    step.action === "restore" ? `${step.version} (restore ${step.tables!.join(", ")})` : step.action === "remake" ? `${step.version} (make again ${step.object})` : `${step.version} (${step.name})`;
  return steps.map(said).join(", ");
}

/** Versions known to this build that the database has not applied (for /readyz). */
export async function pendingMigrations(sql: Sql): Promise<string[]> {
  const [exists] = await sql.unsafe<{ ok: boolean }[]>(recordExistsSql);
  if (!exists?.ok) return MIGRATIONS.map((m) => m.version);
  const rows = await sql.unsafe<{ version: string }[]>(versionsSql);
  const done = new Set(rows.map((r) => r.version));
  return MIGRATIONS.filter((m) => !done.has(m.version)).map((m) => m.version);
}

/** What an index build of a migration (on `sql`'s other session) has done, for migrate's heartbeat. */
export async function indexBuildProgress(sql: Sql): Promise<string | undefined> {
  const [p] = await sql.unsafe<IndexBuildProgress[]>(indexBuildProgressSql);
  return p ? indexBuildDetail(p) : undefined;
}
