// Hostile input against the compiled executable over raw sockets: generated requests with
// raw bytes in the request line and methods fetch() cannot send (TRACE, CONNECT, ...), and
// oversized request lines and headers, up to and past the parser's 1 MiB cap. The process
// must stay up, never answer 5xx, and keep its memory flat.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { DAILY, PRODUCTS } from "../http/fixture.ts";
import { isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase } from "../support/database.ts";
import { rawRoundTrip, rssMb } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import {
  contractBreach,
  hostileRequest,
  METHODS_ON_THE_WIRE,
  parseAnswer,
  PATH,
  rawBytesVariant,
  serialize,
  type HostileRequest,
} from "../support/hostile.ts";

const KEY = "hostile-e2e-key-7a41";
const SEED = Number(process.env.FUZZ_SEED ?? 20261121);
const WARMUP = 500;
const RUNS = 1500;
const PARALLEL = 8;

let server: RunningBinary;
let port: number;

beforeAll(async () => {
  const db = await testDatabase();
  await loadFixture(db.admin, PRODUCTS, DAILY);
  const bin = isolatedBinary();
  server = await startBinary(bin.path, { DATABASE_URL: db.url, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
  port = Number(new URL(server.url).port);
}, 60_000);

afterAll(async () => {
  await server?.stop();
}, 30_000);

// Requests that are not valid HTTP/1.1 never reach the service: Bun's parser answers them
// with a bare status and closes (400; 431 past its size caps; 505 when a space or control
// byte splits the request line into more than three parts), or closes without a word for
// a method it does not know (TRACK, PRI, FOO, lowercase get).
const BUN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND", "M-SEARCH"]);
const bareParserAnswer = (raw: Buffer) => /^HTTP\/1\.1 (400|431|505) [^\r]*\r\nConnection: close\r\n\r\n$/.test(raw.toString("latin1"));

/** Not valid HTTP/1.1: an unknown method, bytes outside visible ASCII in the target, control bytes in a header. */
function notValidHttp(r: HostileRequest): boolean {
  return (
    !BUN_METHODS.has(r.method) ||
    !/^[\x21-\x7e]*$/.test(r.target) ||
    r.headers.some(([, v]) => /[\x00-\x08\x0a-\x1f\x7f]/.test(v))
  );
}

async function exchange(r: HostileRequest): Promise<{ kind: "app" | "parser" | "closed"; status: number; breach: string | null }> {
  const raw = await rawRoundTrip(port, serialize(r));
  if (raw.length === 0 || bareParserAnswer(raw)) {
    const kind = raw.length === 0 ? "closed" : "parser";
    const status = raw.length === 0 ? 0 : Number(raw.toString("latin1").split(" ")[1]);
    return { kind, status, breach: notValidHttp(r) ? null : `the parser refused a valid request (${kind} ${status})` };
  }
  const answer = parseAnswer(raw);
  if (!answer) return { kind: "app", status: 0, breach: `unparsable answer ${JSON.stringify(raw.toString("latin1").slice(0, 200))}` };
  return { kind: "app", status: answer.status, breach: contractBreach(r, answer, true) };
}

test(`${RUNS} generated requests over raw sockets: no 5xx, documented JSON, process up, RSS flat`, async () => {
  const requests = fc
    .sample(hostileRequest(METHODS_ON_THE_WIRE, KEY), { numRuns: WARMUP + RUNS, seed: SEED })
    .map((r, i) => ({ ...r, target: rawBytesVariant(r.target, i) }));
  const statuses = new Map<string, number>();
  const breaches: string[] = [];
  let rssAfterWarmup = 0;
  let rssMiddle = 0;
  for (let i = 0; i < requests.length; i += PARALLEL) {
    if (i >= WARMUP && rssAfterWarmup === 0) rssAfterWarmup = rssMb(server.proc.pid);
    if (i >= WARMUP + RUNS / 2 && rssMiddle === 0) rssMiddle = rssMb(server.proc.pid);
    const batch = requests.slice(i, i + PARALLEL);
    const results = await Promise.all(batch.map(exchange));
    results.forEach((res, j) => {
      const key = `${res.kind}:${res.status}`;
      statuses.set(key, (statuses.get(key) ?? 0) + 1);
      if (res.breach) breaches.push(`${res.breach} for ${batch[j]!.method} ${batch[j]!.target.slice(0, 200)}`);
    });
  }
  const rssAtEnd = rssMb(server.proc.pid);
  console.log(JSON.stringify({ statuses: Object.fromEntries(statuses), rss_mb: { after_warmup: Math.round(rssAfterWarmup), middle: Math.round(rssMiddle), end: Math.round(rssAtEnd) } }));
  expect(breaches.slice(0, 5)).toEqual([]);
  expect(server.proc.exitCode).toBeNull();
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  // Most requests are valid HTTP and answered by the app itself.
  const byApp = [...statuses].filter(([k]) => k.startsWith("app")).reduce((n, [, v]) => n + v, 0);
  expect(byApp).toBeGreaterThan((WARMUP + RUNS) / 2);
  // Flat: the second half of the run adds (almost) nothing to what the first half reached.
  expect(rssAtEnd - rssAfterWarmup).toBeLessThan(32);
  expect(rssAtEnd - rssMiddle).toBeLessThan(16);
}, 180_000);

describe("oversized requests against the executable", () => {
  const get = (target: string, extra = "") =>
    Buffer.from(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${KEY}\r\n${extra}Connection: close\r\n\r\n`, "latin1");
  const answerOf = async (bytes: Buffer) => {
    const raw = await rawRoundTrip(port, bytes);
    const a = parseAnswer(raw);
    return { status: a?.status, type: a?.headers.get("content-type") ?? null, body: a ? new TextDecoder().decode(a.body) : null };
  };
  const query = "?month_from=2024-01-01&month_to=2024-01-31&pad=";

  test("a request line of 60 KiB is answered normally", async () => {
    expect((await answerOf(get(PATH + query + "x".repeat(60 * 1024)))).status).toBe(200);
  });

  test("a request target over 64 KiB: 414 with a JSON body", async () => {
    expect(await answerOf(get(PATH + query + "x".repeat(70 * 1024)))).toEqual({ status: 414, type: "application/json", body: '{"detail":"URI Too Long"}' });
  });

  test("headers over 64 KiB: 431 with a JSON body", async () => {
    expect(await answerOf(get(PATH + "?month_from=2024-01-01&month_to=2024-01-31", `X-Big: ${"y".repeat(70 * 1024)}\r\n`))).toEqual({
      status: 431,
      type: "application/json",
      body: '{"detail":"Request Header Fields Too Large"}',
    });
  });

  test("past the parser's 1 MiB cap or ~200 header lines: Bun's bare 431, connection closed, process up", async () => {
    const cases = [
      get(PATH + query + "x".repeat(2 * 1024 * 1024)),
      get(PATH, `X-Big: ${"y".repeat(2 * 1024 * 1024)}\r\n`),
      get(PATH, Array.from({ length: 250 }, (_, i) => `X-H${i}: v\r\n`).join("")),
    ];
    for (const bytes of cases) {
      const raw = await rawRoundTrip(port, bytes);
      expect(raw.toString("latin1")).toBe("HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n");
    }
    expect(server.proc.exitCode).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });
});
