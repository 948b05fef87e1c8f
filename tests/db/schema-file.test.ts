// sql/schema.sql is what a database migrated by this build holds (issue 45: the schema a DBA reads
// whole). Made again here from a new database and compared: a migration that changes the schema
// fails this test until the file is written again (bun tests/support/schema-dump.ts --write).

import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { dumpMigratedSchema, SCHEMA_FILE } from "../support/schema-dump.ts";

describeWithPostgres("sql/schema.sql", () => {
  test("is the schema of a new database migrated by this build, as pg_dump writes it", async () => {
    const fresh = await dumpMigratedSchema(SERVER_URL);
    const committed = readFileSync(SCHEMA_FILE, "utf8");
    expect(committed === fresh ? "the same" : "stale: run bun tests/support/schema-dump.ts --write").toBe("the same");
    // Whole: every trigger and function of the service is in it.
    for (const name of ["product_cost_deltas_on_insert", "product_cost_deltas_note_general", "product_cost_answer_version", "product_cost_months"]) {
      expect(committed).toContain(name);
    }
  }, 60_000);
});
