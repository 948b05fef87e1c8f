// The reverse proxy of docs/reverse-proxy.md, run for real: its ```nginx block, taken from the
// page verbatim (only the listen port, the service's address and the certificate's files
// replaced), in an nginx started here in front of the executable. Over raw TLS sockets
// through nginx, each known limit of Bun's server (docs/architecture.md, Known limits;
// pinned directly by tests/http/bun-server-limits.test.ts) must be handled as the page says,
// dot-segment walks must still reach the service as sent (its 404), X-Forwarded-For must name
// the real client in the service's log, and an ordinary answer must be the service's own.
// A change to the page's block that breaks any of this fails here.
//
// nginx must be installed (Debian: nginx-light); `bash build.sh test` installs it when it
// runs as root with apt-get. Without it this file fails, saying so: it is never skipped.

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect as connectTcp } from "node:net";
import { connect as connectTls } from "node:tls";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import type { DailyCostFixture, ProductFixture } from "../support/fixtures.ts";
import { unusedPort } from "../support/ports.ts";

const PAGE = resolve(import.meta.dir, "../../docs/reverse-proxy.md");
const KEY = "nginx-proxy-e2e-key-5c20";
const PATH = "/external/v1/product-costs";

// Enough rows, with long names, that the whole range's JSON answer is about 1.4 MB: it is
// still streaming when a pipelined request follows it. Every 100th product is a sample, for a
// small answer (segment=sample).
const PRODUCTS: ProductFixture[] = Array.from({ length: 3000 }, (_, i) => ({
  product_id: i + 1,
  erp_product_id: 500000 + i,
  erp_sku: `SKU-${String(i).padStart(5, "0")}`,
  product_name: `Product ${i} ${"long name ".repeat(30)}`,
  is_sample: i % 100 === 0,
}));
const DAILY: DailyCostFixture[] = PRODUCTS.map((p, i) => ({
  product_id: p.product_id,
  cost_date: `2024-01-${String(1 + (i % 28)).padStart(2, "0")}`,
  purchase_cost_usd: `${i}.25`,
  inbound_freight_usd: i % 3 ? "1.5" : null,
  shipping_to_customer_usd: "0",
  warehouse_fees_usd: `${i % 7}`,
}));
const ALL = `${PATH}?month_from=2024-01-01&month_to=2024-01-31&segment=all`;
const SAMPLES = `${PATH}?month_from=2024-01-01&month_to=2024-01-31&segment=sample`;

/** nginx, where Debian puts it (/usr/sbin is not on every PATH), or a clear failure. */
function nginxPath(): string {
  const found = Bun.which("nginx", { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/sbin` });
  if (!found) {
    throw new Error(
      "nginx is not installed, and tests/proxy/nginx-proxy.test.ts runs docs/reverse-proxy.md's configuration in it: " +
        "install Debian's nginx-light (`apt-get install nginx-light`; `bash build.sh test` does it by itself when run as root)",
    );
  }
  return found;
}

/** The page's one ```nginx block, exactly as written. */
function pageConfig(): string {
  const blocks = [...readFileSync(PAGE, "utf8").matchAll(/^```nginx\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  if (blocks.length !== 1) throw new Error(`docs/reverse-proxy.md has ${blocks.length} \`\`\`nginx blocks, not one`);
  return blocks[0]!;
}

/** `text` with `from` replaced by `to`, which must occur exactly once (the page and this test agree on its placeholders). */
function replaceOnce(text: string, from: string, to: string): string {
  const count = text.split(from).length - 1;
  if (count !== 1) throw new Error(`docs/reverse-proxy.md's nginx block holds ${JSON.stringify(from)} ${count} times, not once`);
  return text.replace(from, to);
}

interface Answer {
  status: number;
  /** The head as sent, Date line removed (it changes every second). */
  head: string;
  headers: Headers;
  body: Buffer;
}

/** The complete answers in `raw`, in order; a last answer cut short is left out. */
function answersIn(raw: Buffer): Answer[] {
  const answers: Answer[] = [];
  let at = 0;
  for (;;) {
    const split = raw.indexOf("\r\n\r\n", at);
    if (split === -1) return answers;
    const lines = raw.subarray(at, split).toString("latin1").split("\r\n");
    const headers = new Headers();
    for (const line of lines.slice(1)) headers.append(line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 1).trim());
    let end = split + 4;
    let body: Buffer;
    if (headers.get("transfer-encoding") === "chunked") {
      const parts: Buffer[] = [];
      for (;;) {
        const eol = raw.indexOf("\r\n", end);
        if (eol === -1) return answers;
        const size = parseInt(raw.subarray(end, eol).toString("latin1"), 16);
        if (eol + 2 + size + 2 > raw.length) return answers;
        parts.push(raw.subarray(eol + 2, eol + 2 + size));
        end = eol + 2 + size + 2;
        if (size === 0) break;
      }
      body = Buffer.concat(parts);
    } else {
      const length = Number(headers.get("content-length") ?? 0);
      if (end + length > raw.length) return answers;
      body = raw.subarray(end, end + length);
      end += length;
    }
    const head = lines.filter((l) => !l.startsWith("Date: ")).join("\r\n") + "\r\n\r\n";
    answers.push({ status: Number(lines[0]!.split(" ")[1]), head, headers, body });
    at = end;
  }
}

interface Exchange {
  /** Bytes to send once connected. */
  send: string;
  /** Called with each piece of the answer and the total so far; may write more. */
  onData?: (write: (text: string) => void, total: number) => void;
  /** The local address to connect from (another loopback address stands for another client). */
  localAddress?: string;
}

/** Everything the peer sends until it closes (or 15 s pass): over TLS to nginx, or plain TCP to the service. */
function exchange(port: number, tls: boolean, { send, onData, localAddress }: Exchange): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let total = 0;
    const options = { host: "127.0.0.1", port, ...(localAddress ? { localAddress } : {}) };
    const socket = tls
      ? connectTls({ ...options, servername: "costs.example.com", rejectUnauthorized: false }, () => socket.write(send))
      : connectTcp(options, () => socket.write(send));
    socket.on("data", (d: Buffer) => {
      parts.push(d);
      total += d.length;
      onData?.((text) => socket.write(text), total);
    });
    const done = () => (clearTimeout(timer), socket.destroy(), resolve(Buffer.concat(parts)));
    socket.on("close", done);
    // A reset after nginx's last answer (it closes on a request it refused) ends the exchange too.
    socket.on("error", done);
    const timer = setTimeout(done, 15_000);
  });
}

const request = (target: string, extra: string[] = [], version = "HTTP/1.1") =>
  [`GET ${target} ${version}`, "Host: costs.example.com", ...extra].join("\r\n") + "\r\n\r\n";
const authorized = (id: string, extra: string[] = []) => [`Authorization: Bearer ${KEY}`, `X-Request-Id: ${id}`, ...extra];

/** nginx's own error page, as it sends it with this configuration (its Date line left out). */
const nginxError = (status: string, html: string) =>
  `HTTP/1.1 ${status}\r\nServer: nginx\r\nContent-Type: text/html\r\nContent-Length: ${html.length}\r\nConnection: close\r\n` +
  `Strict-Transport-Security: max-age=31536000\r\n\r\n${html}`;
const nginxPage = (title: string) => `<html>\r\n<head><title>${title}</title></head>\r\n<body>\r\n<center><h1>${title}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n`;

describe("docs/reverse-proxy.md's nginx in front of the executable", () => {
  let dir: string;
  let service: RunningBinary;
  let servicePort: number;
  let nginx: Subprocess<"ignore", "ignore", "ignore"> | undefined;
  let nginxPort: number;
  let monitoringPort: number;

  beforeAll(async () => {
    const nginxBin = nginxPath();
    const bin = isolatedBinary();
    service = await startBinary(bin.path, { ...(await fixtureDatabaseEnv(bin.path, { products: PRODUCTS, daily: DAILY })), PRODUCT_COST_API_KEYS: KEY, TRUSTED_PROXIES: "127.0.0.1" }, [], bin.dir);
    servicePort = Number(new URL(service.url).port);

    dir = mkdtempSync(join(tmpdir(), "pce-nginx-"));
    const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=costs.example.com", "-keyout", join(dir, "key.pem"), "-out", join(dir, "cert.pem")]);
    if (made.exitCode !== 0) throw new Error(`openssl req failed: ${made.stderr.toString()}`);

    nginxPort = unusedPort();
    monitoringPort = unusedPort();
    let site = pageConfig();
    site = replaceOnce(site, "listen 443 ssl;", `listen 127.0.0.1:${nginxPort} ssl;`);
    site = replaceOnce(site, "listen 127.0.0.1:8081;", `listen 127.0.0.1:${monitoringPort};`);
    site = replaceOnce(site, "server 127.0.0.1:8080;", `server 127.0.0.1:${servicePort};`);
    site = replaceOnce(site, "/etc/nginx/tls/costs.example.com.pem", join(dir, "cert.pem"));
    site = replaceOnce(site, "/etc/nginx/tls/costs.example.com.key", join(dir, "key.pem"));
    writeFileSync(join(dir, "product-cost-export.conf"), site);
    // The main file around it, as Debian's nginx.conf is around conf.d/ (gzip on included),
    // with every file nginx writes in this directory. As root the workers would switch to
    // nobody, who cannot enter this directory: they stay root here.
    writeFileSync(
      join(dir, "nginx.conf"),
      `${process.getuid?.() === 0 ? "user root root;\n" : ""}worker_processes 1;
events { worker_connections 256; }
http {
    gzip on;
    access_log ${dir}/access.log;
    client_body_temp_path ${dir}/client_body;
    proxy_temp_path ${dir}/proxy;
    fastcgi_temp_path ${dir}/fastcgi;
    uwsgi_temp_path ${dir}/uwsgi;
    scgi_temp_path ${dir}/scgi;
    include ${dir}/product-cost-export.conf;
}
`,
    );
    const args = ["-p", `${dir}/`, "-e", `${dir}/error.log`, "-c", `${dir}/nginx.conf`];
    const checked = Bun.spawnSync([nginxBin, "-t", ...args, "-g", `pid ${dir}/nginx.pid;`]);
    if (checked.exitCode !== 0) throw new Error(`nginx -t refuses the page's configuration: ${checked.stderr.toString()}`);
    // Its messages go to error.log (-e), read when it fails; `nginx -t` above showed any start-up error.
    nginx = Bun.spawn([nginxBin, ...args, "-g", `daemon off; pid ${dir}/nginx.pid;`], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    // Ready once it accepts connections.
    for (const deadline = Date.now() + 10_000; ; ) {
      if (nginx.exitCode !== null) throw new Error(`nginx exited ${nginx.exitCode}: ${readFileSync(join(dir, "error.log"), "utf8")}`);
      const up = await new Promise<boolean>((r) => {
        const s = connectTcp({ host: "127.0.0.1", port: nginxPort }, () => (s.destroy(), r(true)));
        s.on("error", () => r(false));
      });
      if (up) break;
      if (Date.now() > deadline) throw new Error(`nginx does not listen on ${nginxPort}: ${readFileSync(join(dir, "error.log"), "utf8")}`);
      await Bun.sleep(50);
    }
  }, 60_000);

  afterAll(async () => {
    if (nginx && nginx.exitCode === null) {
      nginx.kill("SIGTERM"); // fast shutdown: the master stops its workers, then exits
      await nginx.exited;
    }
    await service?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const viaNginx = (e: Exchange) => exchange(nginxPort, true, e);
  const viaMonitoring = (e: Exchange) => exchange(monitoringPort, false, e);
  const direct = (e: Exchange) => exchange(servicePort, false, e);
  /** The service's log line of the request with this X-Request-Id. */
  const logOf = (id: string) => service.waitForLine((l) => l.msg === "request" && l.request_id === id, 5000);

  test("an authenticated GET: the service's own status, headers and body, with nginx's Server and HSTS", async () => {
    for (const target of [SAMPLES, ALL]) {
      const [viaProxy] = answersIn(await viaNginx({ send: request(target, authorized("plain-proxy", ["Connection: close"])) }));
      const [straight] = answersIn(await direct({ send: request(target, authorized("plain-direct", ["Connection: close"])) }));
      const api = (a: Answer) => ({
        status: a.status,
        ...Object.fromEntries(["content-type", "etag", "cache-control", "vary", "x-content-type-options", "x-data-changed-at"].map((n) => [n, a.headers.get(n)])),
        body: a.body.toString("utf8"),
      });
      expect(api(viaProxy!)).toEqual(api(straight!));
      expect(viaProxy!.status).toBe(200);
      expect((JSON.parse(viaProxy!.body.toString("utf8")) as unknown[]).length).toBe(target === ALL ? 3000 : 30);
      expect([viaProxy!.headers.get("server"), viaProxy!.headers.get("strict-transport-security"), viaProxy!.headers.get("x-request-id")]).toEqual(["nginx", "max-age=31536000", "plain-proxy"]);
    }
  });

  test("a request pipelined while the first answer (1.4 MB) still streams: both answered whole, in order", async () => {
    const [whole] = answersIn(await direct({ send: request(ALL, authorized("whole", ["Connection: close"])) }));
    let sentAt = 0;
    const raw = await viaNginx({
      send: request(ALL, authorized("pipelined-1")),
      onData(write, total) {
        // Once part of the first answer is in: the rest is still on its way.
        if (!sentAt && total > 256 * 1024) {
          sentAt = total;
          write(request(SAMPLES, authorized("pipelined-2", ["Connection: close"])));
        }
      },
    });
    const answers = answersIn(raw);
    expect(sentAt).toBeGreaterThan(0);
    expect(sentAt).toBeLessThan(whole!.body.length);
    expect(answers.map((a) => [a.status, a.headers.get("x-request-id")])).toEqual([
      [200, "pipelined-1"],
      [200, "pipelined-2"],
    ]);
    expect(answers[0]!.body.equals(whole!.body)).toBe(true);
    expect((JSON.parse(answers[1]!.body.toString("utf8")) as unknown[]).length).toBe(30);
    // The service answered each whole: no 499 for the first.
    expect([(await logOf("pipelined-1")).status, (await logOf("pipelined-2")).status]).toEqual([200, 200]);
  });

  test("two requests to the endpoint in one packet: both answered, in order", async () => {
    const raw = await viaNginx({ send: request(SAMPLES, authorized("packet-1")) + request(SAMPLES, authorized("packet-2", ["Connection: close"])) });
    const answers = answersIn(raw);
    expect(answers.map((a) => [a.status, a.headers.get("x-request-id"), (JSON.parse(a.body.toString("utf8")) as unknown[]).length])).toEqual([
      [200, "packet-1", 30],
      [200, "packet-2", 30],
    ]);
  });

  test("HTTP/1.0 with Expect: 100-continue: no 100 Continue, only the answer", async () => {
    const raw = await viaNginx({ send: request(SAMPLES, authorized("expect-10", ["Expect: 100-continue"]), "HTTP/1.0") });
    const answers = answersIn(raw);
    expect(raw.toString("latin1")).toStartWith("HTTP/1.1 200 OK\r\n");
    expect(answers.map((a) => [a.status, a.headers.get("x-request-id"), (JSON.parse(a.body.toString("utf8")) as unknown[]).length])).toEqual([[200, "expect-10", 30]]);
  });

  test("OPTIONS * and a 1.1 MB target: nginx's own 400 and 414, never reaching the service; a 70 KB target still gets the service's JSON 414", async () => {
    const before = service.lines.filter((l) => l.msg === "request").length;
    const options = await viaNginx({ send: "OPTIONS * HTTP/1.1\r\nHost: costs.example.com\r\n\r\n" });
    expect(answersIn(options).map((a) => a.head + a.body.toString("latin1"))).toEqual([nginxError("400 Bad Request", nginxPage("400 Bad Request"))]);
    const huge = await viaNginx({ send: request(`/${"a".repeat(1_100_000)}`) });
    expect(answersIn(huge).map((a) => a.head + a.body.toString("latin1"))).toEqual([nginxError("414 Request-URI Too Large", nginxPage("414 Request-URI Too Large"))]);

    const long = answersIn(await viaNginx({ send: request(`${PATH}?${"x".repeat(70_000)}`, ["X-Request-Id: long-target", "Connection: close"]) }));
    expect(long.map((a) => [a.status, a.headers.get("content-type"), a.body.toString("utf8")])).toEqual([[414, "application/json", '{"detail":"URI Too Long"}']]);
    await logOf("long-target");
    // Of the three, only the 70 KB one reached the service.
    expect(service.lines.filter((l) => l.msg === "request").slice(before).map((l) => l.request_id)).toEqual(["long-target"]);
  });

  test("only the API is public: health, metrics and docs get 404 there, dot-segment walks too; the monitoring listener serves them (issue 42)", async () => {
    const notFound = { status: 404, type: "application/json", body: '{"detail":"Not Found"}' };
    const answerOf = async (target: string, via = viaNginx) => {
      const [a] = answersIn(await via({ send: request(target, authorized("public", ["Connection: close"])) }));
      return { status: a?.status, type: a?.headers.get("content-type"), body: a?.body.toString("utf8") };
    };
    const before = service.lines.filter((l) => l.msg === "request").length;
    const unpublished = ["/metrics", "/readyz", "/healthz", "/docs", "/openapi.json", "/", "/external/v1/../../metrics", "/external/%2e%2e/metrics", "/external/v1/%2E%2E/%2e%2e/healthz", "/external/./../docs"];
    for (const target of unpublished) expect({ target, ...(await answerOf(target)) }).toEqual({ target, ...notFound });
    // nginx answered those itself: none reached the service.
    expect(service.lines.filter((l) => l.msg === "request").length).toBe(before);
    // A walk that resolves inside the API's path reaches the service as sent: its own 404.
    expect(await answerOf("/external/v1/x/../product-costs?month_from=2024-01-01&month_to=2024-01-31")).toEqual(notFound);
    await service.waitForLine((l) => l.msg === "request" && l.status === 404 && l.dot_segments === true);
    // The monitoring listener serves what the public one hides.
    for (const path of ["/metrics", "/readyz", "/healthz", "/docs", "/openapi.json"]) {
      expect([path, (await answerOf(path, viaMonitoring)).status]).toEqual([path, 200]);
    }
    expect((await answerOf("/metrics", viaMonitoring)).body).toContain("http_requests_total");
  });

  test("with TRUSTED_PROXIES naming nginx, the log's client is the address nginx saw, whatever X-Forwarded-For the client sent", async () => {
    // 127.0.0.2 stands for a client on another machine; nginx reaches the service from 127.0.0.1.
    for (const [id, extra] of [
      ["xff-plain", []],
      ["xff-forged", ["X-Forwarded-For: 203.0.113.7"]],
    ] as const) {
      const [a] = answersIn(await viaNginx({ send: request(SAMPLES, authorized(id, [...extra, "Connection: close"])), localAddress: "127.0.0.2" }));
      expect(a?.status).toBe(200);
      const line = await logOf(id);
      expect([line.client, line.status]).toEqual(["127.0.0.2", 200]);
    }
  });
});
