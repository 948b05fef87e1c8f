// The serving pool's sessions on a PostgreSQL server: read-only, and the planner settings
// the read queries are tuned for (src/db/client.ts). The embedded database's serving
// session is checked in tests/db/embedded.test.ts. Registered only with a server.

import { afterAll, describe, expect, test } from "bun:test";
import { HAS_POSTGRESQL } from "../support/backends.ts";
import { servicePool } from "../support/database.ts";
import type { Sql } from "../../src/db/client.ts";

if (HAS_POSTGRESQL) {
  describe("serving sessions on PostgreSQL", () => {
    let sql: Sql | undefined;
    afterAll(async () => {
      await sql?.end({ timeout: 5 });
    });

    test("are read-only and plan with work_mem 16MB, random_page_cost 1.1 and custom plans only", async () => {
      sql = await servicePool();
      expect(
        await sql`select current_setting('default_transaction_read_only') as read_only,
                         current_setting('work_mem') as work_mem, current_setting('random_page_cost') as random_page_cost,
                         current_setting('plan_cache_mode') as plan_cache_mode`,
      ).toEqual([{ read_only: "on", work_mem: "16MB", random_page_cost: "1.1", plan_cache_mode: "force_custom_plan" }] as never);
    });
  });
}
