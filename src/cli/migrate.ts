// `migrate [--dry-run]`: applies the migrations the database lacks, each step logged with its
// duration (a heartbeat during a long one), then the refresh that builds what they need. The
// only command that changes a schema, on PostgreSQL and on an embedded data dir alike.

import { resolve } from "node:path";
import { holdsDatabase } from "../backends/embedded/embedded.ts";
import { objectsToMake } from "../rollup/migration-objects.ts";
import { indexBuildProgress, migrate, plannedMigrations } from "../rollup/migrations.ts";
import { openDatabase } from "../backends/open.ts";
import { databaseProblem } from "../database/problems.ts";
import { refreshWithProgress } from "../rollup/refresh-progress.ts";
import type { Logger } from "../ops/log.ts";
import { heartbeat } from "../ops/progress.ts";
import type { CommandLine } from "./command-line.ts";
import { onDatabase } from "./on-database.ts";

export async function runMigrate({ config, own }: CommandLine, logger: Logger): Promise<void> {
  const dryRun = own.get("dry-run") === "true";
  // A dry run changes nothing, not even by making a data dir that is not there yet.
  if (dryRun && !config.databaseUrl && config.dataDir && !holdsDatabase(resolve(config.dataDir))) {
    logger.info("migrate would create a new database, at this build's schema; nothing was changed", {
      pending: 0,
      database: `embedded PostgreSQL (PGlite) in data dir ${resolve(config.dataDir)}, not there yet`,
    });
    return;
  }
  const db = await openDatabase(config, false, logger, { migrating: true });
  // A database that cannot be migrated at all: its cause and the fix, in one line.
  await onDatabase(db, "migrate", databaseProblem, async () => {
    if (dryRun) {
      const steps = await plannedMigrations(db.sql);
      for (const step of steps) logger.info("pending migration", { ...step });
      // What a DBA weighs before saying yes: every object it would make, and what writers pay.
      for (const o of await objectsToMake(db.sql)) {
        logger.info("migrate would make", { kind: o.kind, name: o.name, ...(o.on ? { on: o.on } : {}), by: o.by, purpose: o.purpose, writer_cost: o.writerCost ?? "none" });
      }
      logger.info(steps.length ? "migrate would apply these steps; nothing was changed" : "nothing to migrate", { pending: steps.length, database: db.description });
      return;
    }
    const started = performance.now();
    let beat: (() => void) | undefined;
    const applied = await migrate(db.sql, undefined, {
      onStepStart: (step) => (beat = heartbeat("migrate", `${step.version} ${step.name}`, { probe: () => indexBuildProgress(db.sql) })),
      onStepDone: (step, ms) => {
        beat?.();
        logger.info("migration step done", { ...step, duration_ms: Math.round(ms) });
      },
    });
    logger.info("migrations applied", { applied, duration_ms: Math.round(performance.now() - started), database: db.description });
    // What the migrations need built, built now, while the service may already answer (exactly).
    const refreshed = await refreshWithProgress("migrate", db.sql);
    logger.info("refreshed", { ...refreshed });
  });
}
