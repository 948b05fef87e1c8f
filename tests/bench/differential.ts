// Two builds of the executable, every byte compared: the same generated requests sent to
// both, each answer's status, headers and body compared byte for byte (issue 30: a
// restructuring of the request path must change no byte a client gets). Not part of
// `bun test`; run before landing a change to the request path:
//
//   bun tests/bench/differential.ts --a <old executable> --b dist/product-cost-export [--requests 30000] [--seed N]
//       [--answer-cache-mb N] [--pause-every N --pause-ms M]
//
// --answer-cache-mb: both builds' ANSWER_CACHE_MB (default theirs); 0 reads every 200 from the
// database. At the end, B's edge store's counts (its /metrics, when it has one): how many
// answers were made from edges held rather than by a statement.
// --pause-every/--pause-ms: after every N requests sent, no client sends for M ms, so that a
// build's background work that waits for a quiet service (the edge warmer: 250 ms without a
// read) runs, and later answers are made from what it kept.
//
// Both serve one database on TEST_DATABASE_URL's server (a throwaway one: the endpoint
// fixture, 4,000 more products in January 2030 so that answers span many chunks, and a
// refresh so that calendar months are served rendered). The requests mix valid and invalid
// ranges, segments, keys, Accept and Accept-Encoding, If-None-Match and If-Match (each
// build's own ETag for the same question, a stale one, `*`, garbage), GET and HEAD, and a
// few other paths. Compared: status, every header but Date and X-Request-Id, the ETag
// without its hash (the hash names the build, so it differs by design), and the body's bytes
// as sent (never decompressed). How a body is delimited (Content-Length or chunked) is counted
// apart: it is framing, and the bytes are compared anyway. Exit status 1 on any difference;
// the first ones are printed.

import { KEY } from "../support/app.ts";
import { startBinary, type RunningBinary } from "../support/binary.ts";
import { testDatabase, dropTestDatabase } from "../support/database.ts";
import { addManyRows } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "../http/fixture.ts";

function option(name: string, fallback?: string): string {
  const i = process.argv.indexOf(`--${name}`);
  const value = i >= 0 ? process.argv[i + 1] : fallback;
  if (value === undefined) throw new Error(`--${name} is required`);
  return value;
}

const binaryA = option("a");
const binaryB = option("b", "dist/product-cost-export");
const total = Number(option("requests", "30000"));
const seed = Number(option("seed", String(Math.floor(Math.random() * 2 ** 31))));
const CONCURRENCY = 8;

// mulberry32: small, seeded, good enough to draw requests.
function prng(s: number): () => number {
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const random = prng(seed);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const DAYS = [
  "2024-01-01", "2024-01-31", "2023-12-31", "2024-02-01", "2024-01-15", "2024-12-31", "2024-03-05", "2024-03-31",
  "2030-01-01", "2030-01-31", "2030-01-15", "2029-12-01", "2030-03-31", "2030-02-28", "2031-01-01",
];
const BAD_DAYS = ["2024-13-01", "2024-1-5", "20240105", " 2024-01-01", "", "2024-02-30", "0000-01-01", "2024-01-01T00:00:00", "1704067200", "%ZZ", "2024-01-01%00"];
const SEGMENTS = ["normal", "sample", "all", "bogus", "ALL"];
const ACCEPTS = [undefined, "application/json", "text/csv", "text/*;q=0.9, application/json;q=0.5", "text/csv; variant=excel", "image/png", "*/*", "text/csv;q=0"];
const ENCODINGS = [undefined, "gzip", "br", "br;q=1, gzip;q=0.5", "identity", "gzip;q=0", "*"];
const AUTHS = [`Bearer ${KEY}`, `Bearer ${KEY}`, `Bearer ${KEY}`, `Bearer ${KEY}`, undefined, "Bearer wrong-key-0123456789", "Basic abc", `bearer ${KEY}`];
const OTHER_PATHS = ["/healthz", "/readyz", "/nope", "/external/v1/product-costs/", "/external/v1/product-cost", "/openapi.json"];

interface Drawn {
  method: "GET" | "HEAD";
  path: string;
  headers: Record<string, string>;
  /** Names the question and representation, to find the ETag each build gave it. */
  question: string;
  condition?: "own" | "stale" | "star" | "garbage";
  conditionHeader?: "if-none-match" | "if-match";
}

function queryString(): string {
  const parts: string[] = [];
  const from = random() < 0.9 ? pick(DAYS) : pick(BAD_DAYS);
  const to = random() < 0.9 ? pick(DAYS) : pick(BAD_DAYS);
  if (random() < 0.97) parts.push(`month_from=${from}`);
  if (random() < 0.97) parts.push(`month_to=${to}`);
  if (random() < 0.5) parts.push(`segment=${pick(SEGMENTS)}`);
  if (random() < 0.05) parts.push(`month_from=${pick(DAYS)}`); // repeated: the last one counts
  if (random() < 0.05) parts.push("extra=1");
  return parts.sort(() => random() - 0.5).join("&");
}

function draw(): Drawn {
  const method = random() < 0.15 ? "HEAD" : "GET";
  const headers: Record<string, string> = {};
  if (random() < 0.05) {
    const path = pick(OTHER_PATHS);
    return { method, path, headers, question: path };
  }
  const path = `/external/v1/product-costs?${queryString()}`;
  const auth = pick(AUTHS);
  if (auth) headers.authorization = auth;
  const accept = pick(ACCEPTS);
  if (accept) headers.accept = accept;
  const encoding = pick(ENCODINGS);
  if (encoding) headers["accept-encoding"] = encoding;
  const drawn: Drawn = { method, path, headers, question: `${path} ${accept} ${encoding}` };
  if (random() < 0.4) {
    drawn.conditionHeader = random() < 0.8 ? "if-none-match" : "if-match";
    drawn.condition = pick(["own", "own", "own", "stale", "star", "garbage"] as const);
  }
  return drawn;
}

// Most requests ask one of a few hundred questions again, as clients polling do: conditional
// requests then name ETags the builds gave, and kept answers are served.
const ASKED_AGAIN = Array.from({ length: 300 }, draw);

function next(): Drawn {
  if (random() >= 0.8) return draw();
  const again = { ...pick(ASKED_AGAIN) };
  if (random() < 0.5) {
    again.conditionHeader = random() < 0.8 ? "if-none-match" : "if-match";
    again.condition = pick(["own", "own", "own", "stale", "star", "garbage"] as const);
  } else {
    again.conditionHeader = again.condition = undefined;
  }
  return again;
}

interface Seen {
  status: number;
  headers: [string, string][];
  body: Uint8Array;
  /** How the body was delimited (RFC 9112 §6): by Content-Length or chunked. Counted apart: the bytes are compared anyway. */
  framing: "length" | "chunked" | "none";
}

const IGNORED = new Set(["date", "x-request-id"]);
const FRAMING = new Set(["content-length", "transfer-encoding"]);

class Build {
  readonly tags = new Map<string, string>();
  constructor(readonly server: RunningBinary) {}

  /** The request's headers for this build: its own ETag where the request names one. */
  headersFor(d: Drawn): Record<string, string> {
    const headers = { ...d.headers };
    if (d.conditionHeader) {
      const own = this.tags.get(d.question);
      headers[d.conditionHeader] =
        d.condition === "own" ? (own ?? '"none-yet"') : d.condition === "stale" ? '"stale-tag-json"' : d.condition === "star" ? "*" : "not a tag";
    }
    return headers;
  }

  async send(d: Drawn, headers: Record<string, string>): Promise<Seen & { etag: string | null }> {
    const response = await fetch(this.server.url + d.path, { method: d.method, headers, decompress: false, redirect: "manual" });
    let body = new Uint8Array(await response.arrayBuffer());
    // /healthz names the build's commit, which differs by design.
    const commitless = d.path === "/healthz";
    if (commitless) body = new TextEncoder().encode(new TextDecoder().decode(body).replace(/"commit":"[^"]*"/, '"commit":"…"'));
    const etag = response.status === 200 ? response.headers.get("etag") : null;
    const kept: [string, string][] = [];
    const framing = response.headers.has("content-length") ? "length" : response.headers.get("transfer-encoding") === "chunked" ? "chunked" : "none";
    response.headers.forEach((value, name) => {
      if (IGNORED.has(name) || FRAMING.has(name)) return;
      // "<hash of build, version and question>-<format>[-<coding>]": the hash differs by build.
      kept.push([name, name === "etag" ? value.replace(/^(W\/)?"[A-Za-z0-9_-]{22}-/, '$1"…-') : value]);
    });
    kept.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return { status: response.status, headers: kept, body, etag, framing };
  }
}

function differences(a: Seen, b: Seen): string[] {
  const found: string[] = [];
  if (a.status !== b.status) found.push(`status ${a.status} ≠ ${b.status}`);
  const ha = JSON.stringify(a.headers);
  const hb = JSON.stringify(b.headers);
  if (ha !== hb) found.push(`headers ${ha} ≠ ${hb}`);
  if (Buffer.compare(Buffer.from(a.body), Buffer.from(b.body)) !== 0) found.push(`body ${a.body.byteLength} bytes ≠ ${b.body.byteLength} bytes`);
  return found;
}

console.log(`differential: seed ${seed}, ${total} requests, A=${binaryA}, B=${binaryB}`);
const db = await testDatabase();
await loadFixture(db.admin, PRODUCTS, DAILY);
await addManyRows(db.admin, 4000);
const answerCacheMb = process.argv.includes("--answer-cache-mb") ? option("answer-cache-mb") : undefined;
const env = { DATABASE_URL: db.url, PRODUCT_COST_API_KEYS: KEY, ...(answerCacheMb !== undefined ? { ANSWER_CACHE_MB: answerCacheMb } : {}) };
const refresh = Bun.spawnSync([binaryA, "refresh"], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: db.url } });
if (refresh.exitCode !== 0) throw new Error(`refresh failed: ${refresh.stderr}`);
const a = new Build(await startBinary(binaryA, env));
const b = new Build(await startBinary(binaryB, env));

const pauseEvery = Number(option("pause-every", "0"));
const pauseMs = Number(option("pause-ms", "400"));
let pausedUntil = 0; // performance.now() before which no client sends

let sent = 0;
let differing = 0;
const framings = new Map<string, number>(); // "length → chunked": same bytes, delimited otherwise
const differingByPath = new Map<string, number>();
const statuses = new Map<number, number>();
const started = performance.now();
async function worker() {
  while (sent < total) {
    sent++;
    if (pauseEvery > 0 && sent % pauseEvery === 0) pausedUntil = performance.now() + pauseMs;
    const wait = pausedUntil - performance.now();
    if (wait > 0) await Bun.sleep(wait);
    const d = next();
    // Both builds' conditions are chosen at once, and what they answer is learnt at once:
    // each build is asked with the ETag it gave the same question, or each with none.
    const [ha, hb] = [a.headersFor(d), b.headersFor(d)];
    const [x, y] = [await a.send(d, ha), await b.send(d, hb)];
    if (x.etag && y.etag) {
      a.tags.set(d.question, x.etag);
      b.tags.set(d.question, y.etag);
    }
    statuses.set(x.status, (statuses.get(x.status) ?? 0) + 1);
    const found = differences(x, y);
    if (x.framing !== y.framing) framings.set(`${x.framing} → ${y.framing}`, (framings.get(`${x.framing} → ${y.framing}`) ?? 0) + 1);
    if (found.length) {
      differing++;
      const where = `${d.method} ${d.path.split("?")[0]}`;
      differingByPath.set(where, (differingByPath.get(where) ?? 0) + 1);
      if (differing <= 10) console.log(`DIFFERS: ${d.method} ${d.path} ${JSON.stringify(d.headers)} ${d.condition ?? ""}\n  ${found.join("\n  ")}`);
    }
  }
}
let edgeCounts = "";
try {
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  const metrics = await (await fetch(`${b.server.url}/metrics`)).text();
  edgeCounts = [...metrics.matchAll(/^product_cost_export_(edge_cache_(?:hits_total|misses_total|catalogue_reads_total)) (\d+)$/gm)].map((m) => `${m[1]} ${m[2]}`).join(", ");
} finally {
  await a.server.stop();
  await b.server.stop();
  await dropTestDatabase();
}
const seconds = ((performance.now() - started) / 1000).toFixed(1);
const byStatus = [...statuses].sort(([x], [y]) => x - y).map(([s, n]) => `${s}: ${n}`).join(", ");
console.log(`${total} requests in ${seconds} s, ${differing} differing; statuses: ${byStatus}`);
if (framings.size) console.log(`framing differs (Content-Length or chunked; the bytes compared above): ${[...framings].map(([k, n]) => `${k}: ${n}`).join(", ")}`);
if (edgeCounts) console.log(`B's edge store: ${edgeCounts}`);
if (differing) console.log(`differing, by path: ${[...differingByPath].map(([where, n]) => `${where}: ${n}`).join(", ")}`);
process.exit(differing === 0 ? 0 : 1);
