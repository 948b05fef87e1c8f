// HEAD as a client sees it on the socket (in process, fetch() would not show what Bun
// writes): every HEAD answer carries the head its GET would (RFC 9110 §9.3.2), Date
// included (§6.6.1: Bun 1.4.5 writes Date on GET answers but not on HEAD ones, so the
// service sets it); and a 304 to HEAD carries no Content-Length (§8.6: Elysia's HEAD
// route put `content-length: 0` there, the length of the 304's empty body, not the 200's).

import { afterAll, beforeAll, expect, test } from "bun:test";
import { KEY, ring, testApp } from "../support/app.ts";
import { describeBackends, type BackendHandle } from "../support/backends.ts";
import { rawRoundTrip, serveOnSocket } from "../support/faults.ts";
import { loadFixture } from "../support/fixtures.ts";
import { DAILY, PRODUCTS } from "./fixture.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
// RFC 9110 §5.6.7's IMF-fixdate, the only form a sender may generate.
const IMF_FIXDATE = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d\d (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) \d{4} \d\d:\d\d:\d\d GMT$/;

interface Head {
  status: string;
  /** Each header line as [lowercased name, value], in the order sent. */
  fields: [string, string][];
  body: string;
}

async function exchange(port: number, method: string, path: string, headers: Record<string, string> = {}): Promise<Head> {
  const lines = Object.entries({ host: "x", ...headers, connection: "close" }).map(([n, v]) => `${n}: ${v}\r\n`);
  const raw = (await rawRoundTrip(port, Buffer.from(`${method} ${path} HTTP/1.1\r\n${lines.join("")}\r\n`, "latin1"))).toString("latin1");
  const end = raw.indexOf("\r\n\r\n");
  const [status = "", ...fieldLines] = raw.slice(0, end).split("\r\n");
  const fields = fieldLines.map((l): [string, string] => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]);
  return { status, fields, body: raw.slice(end + 4) };
}

/** The header names of an answer, sorted, without those whose presence differs by nature between GET and HEAD. */
const names = (h: Head) => h.fields.map(([n]) => n).filter((n) => n !== "transfer-encoding" && n !== "content-length").sort();
const field = (h: Head, name: string) => h.fields.filter(([n]) => n === name).map(([, v]) => v);

describeBackends("HEAD on the wire on $name", (backend) => {
  let db: BackendHandle;
  let server: ReturnType<typeof serveOnSocket>;
  beforeAll(async () => {
    db = await backend.open();
    await loadFixture(db.admin, PRODUCTS, DAILY);
    server = serveOnSocket(testApp(db.service, { keys: ring(KEY) }).handle);
  });
  afterAll(async () => {
    server.stop();
    await db.close();
  });

  const auth = { authorization: `Bearer ${KEY}`, "accept-encoding": "identity" };

  test.each([
    ["200, the endpoint", JAN, auth, "HTTP/1.1 200 OK"],
    ["401", JAN, {}, "HTTP/1.1 401 Unauthorized"],
    ["422", "/external/v1/product-costs?month_from=x", auth, "HTTP/1.1 422 Unprocessable Entity"],
    ["400", "/external/v1/product-costs?month_from=2024-02-01&month_to=2024-01-01", auth, "HTTP/1.1 400 Bad Request"],
    ["200, /healthz", "/healthz", {}, "HTTP/1.1 200 OK"],
    ["404", "/nowhere", {}, "HTTP/1.1 404 Not Found"],
  ] as const)("HEAD %s: the GET's status and header fields, one Date (IMF-fixdate), no body", async (_, path, headers, status) => {
    const get = await exchange(server.port, "GET", path, headers);
    const head = await exchange(server.port, "HEAD", path, headers);
    expect({ status: head.status, names: names(head), body: head.body }).toEqual({ status, names: names(get), body: "" });
    expect(field(head, "date")).toHaveLength(1);
    expect(field(head, "date")[0]).toMatch(IMF_FIXDATE);
  });

  test("a 304 to HEAD: the GET's 304 header fields, one Date, and no Content-Length", async () => {
    const etag = field(await exchange(server.port, "GET", JAN, auth), "etag")[0]!;
    const get = await exchange(server.port, "GET", JAN, { ...auth, "if-none-match": etag });
    const head = await exchange(server.port, "HEAD", JAN, { ...auth, "if-none-match": etag });
    expect(get.status).toBe("HTTP/1.1 304 Not Modified");
    expect({ status: head.status, names: head.fields.map(([n]) => n).sort(), body: head.body }).toEqual({
      status: "HTTP/1.1 304 Not Modified",
      names: get.fields.map(([n]) => n).sort(),
      body: "",
    });
    expect(field(head, "content-length")).toEqual([]);
    expect(field(head, "date")).toHaveLength(1);
    expect(field(head, "etag")).toEqual([etag]);
  });
});
