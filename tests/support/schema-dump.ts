// sql/schema.sql: the schema a migrated database has, whole, as pg_dump writes it (issue 45): every
// table, index, function (its current body) and trigger, for a DBA to read in one file instead of
// fourteen migrations. Made from a new database migrated by this build; tests/db/schema-file.test.ts
// makes it again and compares, so it is never stale. To write it after a new migration:
//
//   bun tests/support/schema-dump.ts --write
//
// pg_dump's lines that change from run to run or server to server (its version, the \restrict
// key of 15.14 and later) are left out.

import { resolve } from "node:path";
import postgres from "postgres";
import { createPool } from "../../src/database/client.ts";
import { migrate } from "../../src/rollup/migrations.ts";

export const SCHEMA_FILE = resolve(import.meta.dir, "../../sql/schema.sql");

const HEADER = `-- The schema of a database migrated by this build (\`product-cost-export migrate\`), whole:
-- every table, index, function and trigger, each function and trigger as it is now (the
-- migrations in sql/migrations/ made them step by step; this is where they ended). The ETL's two
-- tables (products, product_daily_costs) are the contract's; everything else is the service's
-- (what each is for: docs/database.md, "What migrate makes"; the refresh: sql/README.md).
-- Made by pg_dump --schema-only from a new database; do not edit: run
--   bun tests/support/schema-dump.ts --write
-- (tests/db/schema-file.test.ts fails while it differs). Not a way to make a database: \`migrate\` is,
-- and it makes an object of its own that was dropped by hand (a function, a trigger, an index)
-- again from its block here (src/rollup/migrations.ts).
`;

/**
 * pg_dump's schema of the database at `url` as sql/schema.sql writes it, HEADER first. Without
 * the months' partitions (the refresh makes one per month of data: a new database has none).
 */
export function dumpSchema(url: string): string {
  const dump = Bun.spawnSync(["pg_dump", "--schema-only", "--no-owner", "--no-privileges", "--exclude-table=public.product_cost_months_*", url], { stdout: "pipe", stderr: "pipe" });
  if (dump.exitCode !== 0) throw new Error(`pg_dump failed (is PostgreSQL's client installed?): ${dump.stderr.toString()}`);
  const lines = dump.stdout
    .toString()
    .split("\n")
    .filter((l) => !/^\\(un)?restrict /.test(l) && !/^-- Dumped (from|by) /.test(l));
  return HEADER + lines.join("\n").replace(/\n{3,}/g, "\n\n");
}

/** pg_dump's schema of a new database migrated by this build, on the server of `serverUrl`, with HEADER. */
export async function dumpMigratedSchema(serverUrl: string): Promise<string> {
  const name = `pce_schema_${process.pid}_${Date.now().toString(36)}`;
  const server = postgres(serverUrl, { max: 1, onnotice: () => {} });
  const url = new URL(serverUrl);
  url.pathname = "/" + name;
  await server.unsafe(`create database ${name}`);
  try {
    const sql = createPool({ url: url.toString(), max: 1, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-schema-dump" });
    try {
      await migrate(sql);
    } finally {
      await sql.end({ timeout: 5 });
    }
    return dumpSchema(url.toString());
  } finally {
    await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.end();
  }
}

if (import.meta.main) {
  const serverUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const text = await dumpMigratedSchema(serverUrl);
  if (process.argv.includes("--write")) {
    await Bun.write(SCHEMA_FILE, text);
    console.log(`wrote ${SCHEMA_FILE} (${text.split("\n").length} lines)`);
  } else process.stdout.write(text);
}
