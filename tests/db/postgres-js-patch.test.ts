// The one change carried on postgres.js 3.4.9 (patches/postgres@3.4.9.patch): a query that
// fails after some of its rows arrived must not leave its row count on the connection.
// Upstream, the next query on that connection stored its rows after that many holes
// (porsager/postgres#1119, #1181, both open).
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import postgres from "postgres";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("postgres.js as patched", () => {
  const sql = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  afterAll(() => sql.end({ timeout: 2 }));

  test("the query after one that failed mid-rows gets exactly its own rows", async () => {
    // Rows 1 to 3 are sent, then row 4 divides by zero.
    const failed = await sql`select i, 1 / (4 - i) as boom from generate_series(1, 10) i`.catch((err: Error) => err.message);
    expect(failed).toBe("division by zero");
    const next = await sql<{ x: number }[]>`select x from generate_series(1, 5) x`;
    expect({ length: next.length, rows: [...next] }).toEqual({ length: 5, rows: [1, 2, 3, 4, 5].map((x) => ({ x })) });
  });

  test("the package is the pinned version the patch was made for, and the patch is applied", () => {
    const root = join(import.meta.dir, "../../node_modules/postgres");
    expect(JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version).toBe("3.4.9");
    for (const build of ["src", "cjs/src", "cf/src"]) {
      expect(readFileSync(join(root, build, "connection.js"), "utf8")).toContain("product-cost-export patch (porsager/postgres#1119, #1181)");
    }
  });
});
