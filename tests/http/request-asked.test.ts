// What a request asked, in its log line (issue 55, part 4): the range, segment and format of a
// request whose query was accepted; the encoding, the source and whether it was kept of a 200;
// a W3C traceparent's trace id, and this request's span sent back as traceresponse.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createAnswerCache } from "../../src/answer/answer-cache.ts";
import { refreshRollup } from "../../src/rollup/refresh.ts";
import { waitUntil } from "../support/faults.ts";
import { KEY, testApp, type TestApp } from "../support/app.ts";
import { backends, describeBackends, type BackendHandle } from "../support/backends.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const COSTS = "/external/v1/product-costs";
const AUTH = { authorization: `Bearer ${KEY}` };
let n = 0;

describeBackends("what a request asked, in its log line, on $name", (backend) => {
let db: BackendHandle;
let app: TestApp;

/** The request's log line, once it is written. */
async function lineOf(path: string, headers: Record<string, string> = {}): Promise<{ res: Response; line: Record<string, unknown> }> {
  const id = `request-log-${++n}`;
  const res = await app.get(path, { ...AUTH, "x-request-id": id, ...headers });
  await res.arrayBuffer();
  await waitUntil(`${id} is logged`, () => app.logs.some((l) => l.request_id === id));
  return { res, line: app.logs.find((l) => l.request_id === id)! };
}

const pick = (line: Record<string, unknown>, ...names: string[]) => Object.fromEntries(names.map((name) => [name, line[name]]));
const FIELDS = ["month_from", "month_to", "segment", "format", "encoding", "source", "kept"];

beforeAll(async () => {
  db = await backend.open();
  await loadFixture(db.admin, PRODUCTS, DAILY);
  await refreshRollup(db.admin);
  app = testApp(db.service, { answerCache: createAnswerCache(16 * 2 ** 20) });
});
afterAll(async () => {
  await db.close();
});

describe("the request line says what the request asked and how it was answered", () => {
  test("a computed range: its question, gzip as asked, read by the range's statement and kept; asked again, from the cache", async () => {
    const path = `${COSTS}?month_from=2024-01-02&month_to=2024-01-30&segment=all`;
    const first = await lineOf(path, { "accept-encoding": "gzip" });
    expect(first.res.status).toBe(200);
    expect(pick(first.line, ...FIELDS)).toEqual({ month_from: "2024-01-02", month_to: "2024-01-30", segment: "all", format: "json", encoding: "gzip", source: "rollup", kept: true });
    const again = await lineOf(path, { "accept-encoding": "gzip" });
    expect(pick(again.line, ...FIELDS)).toEqual({ month_from: "2024-01-02", month_to: "2024-01-30", segment: "all", format: "json", encoding: "gzip", source: "kept", kept: undefined });
  });

  test("lax dates are logged as the question read them; a calendar month in JSON is the rendered answer; CSV says so", async () => {
    const rendered = await lineOf(`${COSTS}?month_from=1704067200&month_to=2024-01-31T00:00:00Z`);
    expect(pick(rendered.line, "month_from", "month_to", "segment", "format", "source")).toEqual({ month_from: "2024-01-01", month_to: "2024-01-31", segment: "normal", format: "json", source: "rendered" });
    const csv = await lineOf(`${COSTS}?month_from=2024-01-01&month_to=2024-01-31&segment=sample`, { accept: "text/csv" });
    expect(pick(csv.line, "format", "source")).toEqual({ format: "csv", source: "rollup" });
  });

  test("a range whose edges the service holds says so", async () => {
    const plain = testApp(db.service); // no answer cache: every 200 read
    const path = (segment: string) => `${COSTS}?month_from=2024-01-05&month_to=2024-01-25&segment=${segment}`;
    const first = await plain.get(path("all"), AUTH);
    await first.arrayBuffer();
    // The edge warmer reads what that read lacked once the service has been quiet for 250 ms.
    let source: unknown;
    for (let i = 0; i < 25 && source !== "edges"; i++) {
      await Bun.sleep(400);
      const id = `edges-${i}`;
      await (await plain.get(path("normal"), { ...AUTH, "x-request-id": id })).arrayBuffer();
      await waitUntil(`${id} is logged`, () => plain.logs.some((l) => l.request_id === id));
      source = plain.logs.find((l) => l.request_id === id)!.source;
    }
    expect(source).toBe("edges");
  });

  test("a 304 says what was asked but no body's encoding or source; a 401 and a 422 say nothing of a question", async () => {
    const path = `${COSTS}?month_from=2024-01-03&month_to=2024-01-04`;
    const { res } = await lineOf(path);
    const unchanged = await lineOf(path, { "if-none-match": res.headers.get("etag")! });
    expect(unchanged.res.status).toBe(304);
    expect(pick(unchanged.line, ...FIELDS)).toEqual({ month_from: "2024-01-03", month_to: "2024-01-04", segment: "normal", format: "json", encoding: undefined, source: undefined, kept: undefined });
    const refused = await lineOf(path, { authorization: "Bearer wrong" });
    expect(refused.res.status).toBe(401);
    expect(pick(refused.line, ...FIELDS)).toEqual(Object.fromEntries(FIELDS.map((f) => [f, undefined])));
    const invalid = await lineOf(`${COSTS}?month_from=2024-13-01&month_to=2024-01-04`);
    expect(invalid.res.status).toBe(422);
    expect(invalid.line.month_from).toBeUndefined();
  });
});

describe("W3C trace context", () => {
  const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

  test("a valid traceparent: its trace id logged, and this request's span sent back as traceresponse, on a 200 and a 401 alike", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong" }] as Record<string, string>[]) {
      const { res, line } = await lineOf(`${COSTS}?month_from=2024-01-03&month_to=2024-01-04`, { traceparent: `00-${TRACE}-00f067aa0ba902b7-01`, ...headers });
      const back = res.headers.get("traceresponse");
      expect(back).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
      expect(back!.split("-")[2]).not.toBe("00f067aa0ba902b7"); // this request's own span, not the caller's
      expect({ trace_id: line.trace_id, span_id: line.span_id }).toEqual({ trace_id: TRACE, span_id: back!.split("-")[2] });
    }
  });

  test("a later version's traceparent is read by its first four fields", async () => {
    const { res, line } = await lineOf("/healthz", { traceparent: `cc-${TRACE}-00f067aa0ba902b7-00-what-comes-later` });
    expect(res.headers.get("traceresponse")).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-00$`));
    expect(line.trace_id).toBe(TRACE);
  });

  test("an invalid traceparent is ignored: no traceresponse, no trace id", async () => {
    const invalid = [
      `00-${TRACE.toUpperCase()}-00f067aa0ba902b7-01`, // uppercase
      `ff-${TRACE}-00f067aa0ba902b7-01`, // version ff
      `00-${"0".repeat(32)}-00f067aa0ba902b7-01`, // trace id all zeros
      `00-${TRACE}-0000000000000000-01`, // parent id all zeros
      `00-${TRACE}-00f067aa0ba902b7-01-extra`, // version 00 with more
      `00-${TRACE}-00f067aa0ba902b7`, // no flags
      "garbage",
    ];
    for (const traceparent of invalid) {
      const { res, line } = await lineOf("/healthz", { traceparent });
      expect({ traceparent, back: res.headers.get("traceresponse"), trace_id: line.trace_id }).toEqual({ traceparent, back: null, trace_id: undefined });
    }
  });
});
});

describeWithPostgres("the request's id in pg_stat_activity while its rows are read", () => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backends().find((b) => b.name === "postgresql")!.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    await refreshRollup(db.admin);
  });
  afterAll(async () => {
    await db.close();
  });

  test("the rows' session goes by `<the pool's name> <request id>` while it reads, and by the pool's name again once done", async () => {
    const app = testApp(db.service, { batchSize: 1 }); // a row a batch, sent at the client's pace
    const poolName = db.service.options.connection.application_name as string;
    const named = `${poolName} find-me-42`;
    const sessions = async (name: string) =>
      (await db.admin<{ n: number }[]>`select count(*)::int as n from pg_stat_activity where application_name = ${name} and xact_start is not null`)[0]!.n;
    const res = await app.get(`${COSTS}?month_from=2024-01-02&month_to=2024-01-30&segment=all`, { ...AUTH, "x-request-id": "find-me-42" });
    expect(res.status).toBe(200);
    // Its first batch sent, the rest waits for this client, which has not read a byte: the read
    // holds its session, in its transaction, under the request's name.
    await waitUntil("the read's session shows the request id", async () => (await sessions(named)) === 1);
    expect(JSON.parse(await res.text()).length).toBe(6);
    // Committed: the session is the pool's again, by its own name.
    await waitUntil("the name is the pool's again", async () => (await sessions(named)) === 0);
  });
});
