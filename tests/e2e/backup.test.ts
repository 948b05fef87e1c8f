// The README's backup, as written: pg_dump of the whole database, pg_restore into an empty
// one, and the executable serves the restored database exactly (the naive GROUP BY of the
// original), with changes still waiting in the log at the time of the dump; `migrate` finds
// nothing to do and `refresh` folds what was waiting.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { createPool, type Sql } from "../../src/database/client.ts";
import { isolatedBinary, startBinary } from "../support/binary.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bulkLoad, loadProducts, prng, randomRange, randomRows, randomWrite, SEGMENTS } from "../support/random-writes.ts";
import { naiveAnswer } from "../support/rollup-oracle.ts";
import { testSeed } from "../support/seed.ts";

const SEED = testSeed("backup test");
const KEY = "backup-test-key-0123456789";

describeWithPostgres("backup and restore as the README says", () => {
  const names = [`pce_backup_${process.pid}`, `pce_restored_${process.pid}`];
  const urls = names.map((name) => Object.assign(new URL(SERVER_URL), { pathname: `/${name}` }).toString());
  let server: ReturnType<typeof postgres>;
  let original: Sql;
  let bin: { dir: string; path: string };
  const run = (args: string[], url: string) => {
    const r = Bun.spawnSync([bin.path, ...args], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: url }, stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  beforeAll(async () => {
    bin = isolatedBinary();
    server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
    for (const name of names) {
      await server.unsafe(`drop database if exists ${name} with (force)`);
      await server.unsafe(`create database ${name}`);
    }
    original = createPool({ url: urls[0]!, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 60000, readOnly: false, applicationName: "pce-backup-test" });
  });
  afterAll(async () => {
    await original.end({ timeout: 5 });
    for (const name of names) await server.unsafe(`drop database if exists ${name} with (force)`);
    await server.end();
  });

  test("pg_dump, pg_restore into an empty database: the same exact answers, nothing to migrate, the waiting changes folded by refresh", async () => {
    expect(run(["migrate"], urls[0]!)).toMatchObject({ code: 0 });
    const r = prng(SEED);
    await loadProducts(original, r);
    await bulkLoad(original, randomRows(r, 800), true);
    expect(run(["refresh"], urls[0]!)).toMatchObject({ code: 0 });
    for (let i = 0; i < 5; i++) await randomWrite(original, r, true); // left waiting in the log
    const ranges = Array.from({ length: 10 }, () => [...randomRange(r), r.pick(SEGMENTS)] as const);
    const expected = await Promise.all(ranges.map(([from, to, segment]) => naiveAnswer(original, from, to, segment)));

    const dump = join(mkdtempSync(join(tmpdir(), "pce-backup-")), "costs.dump");
    const dumped = Bun.spawnSync(["pg_dump", "--format=custom", `--file=${dump}`, urls[0]!], { stderr: "pipe" });
    expect({ code: dumped.exitCode, stderr: dumped.stderr.toString() }).toEqual({ code: 0, stderr: "" });
    const restored = Bun.spawnSync(["pg_restore", "--exit-on-error", "--no-owner", `--dbname=${urls[1]!}`, dump], { stderr: "pipe" });
    expect({ code: restored.exitCode, stderr: restored.stderr.toString() }).toEqual({ code: 0, stderr: "" });

    const dryRun = run(["migrate", "--dry-run"], urls[1]!);
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('"msg":"nothing to migrate"');
    const answers = async () => {
      const service = await startBinary(bin.path, { DATABASE_URL: urls[1]!, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      try {
        return await Promise.all(
          ranges.map(async ([from, to, segment]) => {
            const res = await fetch(`${service.url}/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`, { headers: { authorization: `Bearer ${KEY}` } });
            if (res.status === 200) return await res.text();
            // Not an answer: say why, from the service's own log line.
            const id = res.headers.get("x-request-id");
            const body = await res.text();
            const line = await service.waitForLine((l) => l.msg === "request" && l.request_id === id).catch(() => undefined);
            return `${res.status} ${body} ${JSON.stringify(line)}`;
          }),
        );
      } finally {
        expect(await service.stop()).toBe(0);
      }
    };
    expect({ seed: SEED, answers: await answers() }).toEqual({ seed: SEED, answers: expected });
    expect(run(["refresh"], urls[1]!)).toMatchObject({ code: 0 });
    expect({ seed: SEED, answers: await answers() }).toEqual({ seed: SEED, answers: expected });
  }, 120_000);
});
