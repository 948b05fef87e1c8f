// Keys never leak: after traffic that touches every answer (200, 401, 422, 400, 429, 404,
// 405, 414, 431, a reload), no configured key, no presented key and no configured digest
// appears in the executable's stdout or stderr, in any response (headers or body) or in
// /metrics. A missing and an unknown key get byte-identical answers.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sha256Hex } from "../../src/key/api-keys.ts";
import { DAILY, PRODUCTS } from "../http/fixture.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase } from "../support/database.ts";
import { loadFixture } from "../support/fixtures.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("keys never leak", () => {
  const PLAIN_KEY = "plain-key-Q7vX2m9LkP4s";
  const DIGEST_KEY = "digest-key-Z3nR8tW1cY6b"; // configured only as sha256:<hex>
  const WRONG_KEYS = ["wrong-key-H5jK0pD2fG8a", "plain-key-Q7vX2m9LkP4", "PLAIN-KEY-Q7VX2M9LKP4S"];
  const RELOADED_KEY = "reloaded-key-M4qT9vB2xN7d"; // added to the key file before the SIGHUP
  const SECRETS = [PLAIN_KEY, DIGEST_KEY, RELOADED_KEY, sha256Hex(DIGEST_KEY), sha256Hex(PLAIN_KEY), sha256Hex(RELOADED_KEY), ...WRONG_KEYS];
  const keyFile = join(mkdtempSync(join(tmpdir(), "pce-secrecy-")), "api-keys");
  const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";

  let server: RunningBinary;
  const seen: string[] = []; // every response: status line, headers and body

  beforeAll(async () => {
    const db = await testDatabase();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    writeFileSync(keyFile, `sha256:${sha256Hex(DIGEST_KEY)}\n`);
    const bin = isolatedBinary();
    server = await startBinary(
      bin.path,
      { DATABASE_URL: db.url, PRODUCT_COST_API_KEYS: PLAIN_KEY, PRODUCT_COST_API_KEYS_FILE: keyFile, RATE_LIMIT_PER_MINUTE: "5", LOG_LEVEL: "debug" },
      [],
      bin.dir,
    );
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  }, 30_000);

  async function send(path: string, headers: Record<string, string> = {}, method = "GET"): Promise<Response> {
    const res = await fetch(server.url + path, { method, headers });
    const body = await res.text();
    seen.push(`${res.status} ${JSON.stringify([...res.headers])} ${body}`);
    return new Response(body, { status: res.status, headers: res.headers });
  }

  const comparable = async (res: Response) => ({
    status: res.status,
    headers: [...res.headers].filter(([k]) => k !== "x-request-id" && k !== "date"),
    body: await res.text(),
  });

  test("a missing key, an unknown key and a near miss get byte-identical answers", async () => {
    const answers = [
      await send(JAN),
      await send(JAN, { authorization: `Bearer ${WRONG_KEYS[0]}` }),
      await send(JAN, { authorization: `Bearer ${WRONG_KEYS[1]}` }), // a prefix of a real key
      await send(JAN, { authorization: `Bearer ${WRONG_KEYS[2]}` }), // a real key in another case
      await send(JAN, { authorization: `Basic ${PLAIN_KEY}` }), // a real key, wrong scheme
      await send(JAN, { authorization: "Bearer " }),
    ];
    const first = await comparable(answers[0]!);
    expect(first.status).toBe(401);
    for (const a of answers.slice(1)) expect(await comparable(a)).toEqual(first);
  });

  test("no key, presented or configured, and no digest appears in logs, answers or metrics", async () => {
    const auth = (key: string) => ({ authorization: `Bearer ${key}` });
    await send(JAN, auth(PLAIN_KEY)); // 200
    await send(JAN, auth(DIGEST_KEY)); // 200 through the digest entry
    await send(`${JAN}&segment=${PLAIN_KEY}`, auth(PLAIN_KEY)); // 422 echoes the input: not a key of the request
    await send("/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", auth(DIGEST_KEY)); // 400
    await send(`${JAN}&api_key=${PLAIN_KEY}`, auth(WRONG_KEYS[0]!)); // 401, key in the query
    for (let i = 0; i < 6; i++) await send(JAN, auth(DIGEST_KEY)); // past 5 a minute: 429
    await send(JAN, auth(PLAIN_KEY), "DELETE"); // 405
    await send("/nowhere", auth(PLAIN_KEY)); // 404
    await send(`${JAN}&pad=${"x".repeat(70 * 1024)}`, auth(PLAIN_KEY)); // 414
    await send(JAN, { ...auth(PLAIN_KEY), "x-big": "y".repeat(70 * 1024) }); // 431
    await send("/metrics");
    // A key reload logs too: it must have happened (the new key works), and said nothing secret.
    expect((await send(JAN, auth(RELOADED_KEY))).status).toBe(401);
    writeFileSync(keyFile, `sha256:${sha256Hex(DIGEST_KEY)}\nsha256:${sha256Hex(RELOADED_KEY)}\n`);
    server.proc.kill("SIGHUP");
    expect(await server.waitForLine((l) => l.msg === "api keys reloaded")).toMatchObject({ api_keys: 3, added: 1, removed: 0 });
    expect((await send(JAN, auth(RELOADED_KEY))).status).toBe(200);

    const statuses = seen.map((s) => Number(s.split(" ")[0]));
    for (const status of [200, 400, 401, 404, 405, 414, 422, 429, 431]) expect(statuses).toContain(status);
    await server.stop();
    const logs = JSON.stringify(server.lines) + server.stderr();
    // The 422 body echoes the bad segment value the client sent as a parameter, as FastAPI does;
    // that one answer is the only place where the text is allowed, and only in its body.
    const answers = seen.filter((s) => !s.startsWith("422 ")).join("\n");
    for (const secret of SECRETS) {
      expect({ secret, inLogs: logs.includes(secret), inAnswers: answers.includes(secret) }).toEqual({ secret, inLogs: false, inAnswers: false });
    }
    // A key shows in the logs only as its fingerprint.
    expect(server.lines.some((l) => typeof l.key === "string" && /^[0-9a-f]{8}$/.test(l.key))).toBe(true);
  }, 60_000);
});
