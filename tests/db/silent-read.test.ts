// A read whose query is not on a connection yet (the pool opens one) when the database is
// silent: it fails as an unreachable database (DATABASE_SILENT, or postgres.js's own connect
// timeout when it comes first: a problem the guard holds back on),
// not as the read's own connection deadline, which the guard takes for that request's
// failure alone, so that each next request would wait DB_CONNECT_TIMEOUT_MS again (seen in
// the e2e test of a silent database on a loaded machine: answers after 2, 4 and 6 s).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createPool } from "../../src/database/client.ts";
import { databaseProblem } from "../../src/database/problems.ts";
import { readRow } from "../../src/reads/read.ts";
import { askHosts, createSilenceWatch } from "../../src/database/silence.ts";
import { SERVER_URL } from "../support/database.ts";
import { pausableProxy, type PausableProxy } from "../support/faults.ts";

const CONNECT_TIMEOUT_MS = 1000;
let proxy: PausableProxy;

beforeAll(async () => {
  proxy = await pausableProxy(Number(new URL(SERVER_URL).port || 5432));
});

afterAll(() => {
  proxy.resume();
  proxy.stop();
});

test("a query waiting for its connection when the database is silent fails as the database unreachable (DATABASE_SILENT or CONNECT_TIMEOUT), a problem that holds the guard back", async () => {
  const url = new URL(SERVER_URL);
  url.hostname = "127.0.0.1";
  url.port = String(proxy.port);
  const sql = createPool({ url: url.toString(), max: 1, connectTimeoutMs: CONNECT_TIMEOUT_MS, statementTimeoutMs: 20_000, readOnly: true, applicationName: "pce-silent-read-test" });
  const silence = createSilenceWatch(askHosts(["127.0.0.1"], [proxy.port]), CONNECT_TIMEOUT_MS);
  proxy.pause(); // the pool's first connection is accepted and never answered
  try {
    const started = performance.now();
    const err = await readRow(sql, { text: "select 1", params: [] }, { firstBatchTimeoutMs: 15_000, connectTimeoutMs: CONNECT_TIMEOUT_MS, silence }).then(
      () => undefined,
      (e: unknown) => e,
    );
    const ms = performance.now() - started;
    // Silent (the watch's verdict) or postgres.js's own connect timeout, whichever comes
    // first: both are the database unreachable, never this read's deadline alone.
    const code = (err as { code?: string }).code;
    expect({ silentOrUnreachable: code === "DATABASE_SILENT" || code === "CONNECT_TIMEOUT", code, connecting: databaseProblem(err)?.connecting, withinBound: ms < CONNECT_TIMEOUT_MS * 3 }).toEqual({
      silentOrUnreachable: true,
      code,
      connecting: true,
      withinBound: true,
    });
  } finally {
    proxy.resume();
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}, 30_000);
