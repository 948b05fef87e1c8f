// A dashboard on another origin, in a real browser (issue 55, part 2): headless Chromium loads a
// page from a second server and fetches the API with a Bearer key, which makes the browser send a
// preflight. The executable lists one page's origin in CORS_ALLOWED_ORIGINS: that page reads the
// rows, its ETag and X-Request-Id, and its conditional request is a 304; a page of another origin
// is refused by the browser itself, and so is every page of a service started without the setting.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { JANUARY_NORMAL } from "../http/fixture.ts";

const KEY = "browser-dashboard-key-0123456789";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const CHROMIUM = "/usr/bin/chromium";

/** Debian's Chromium, installed with apt-get when missing (the machine's own package registry). */
function chromium(): string {
  if (Bun.which("chromium")) return CHROMIUM;
  const r = Bun.spawnSync(["apt-get", "install", "-y", "-q", "chromium"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0 || !Bun.which("chromium")) throw new Error(`the browser test needs Debian's chromium, and apt-get install chromium failed: ${r.stderr.toString().trim().split("\n").at(-1)}`);
  return CHROMIUM;
}

/** What the page saw, posted back to its own server. */
interface Seen {
  status?: number;
  rows?: string;
  etag?: string | null;
  requestId?: string | null;
  revalidated?: number;
  refused?: string;
}

/** The dashboard: fetches the API with the key, then again with If-None-Match, and posts what it saw to /report. */
function page(api: string): string {
  return `<!doctype html><meta charset="utf-8"><title>dashboard</title><script>
(async () => {
  const seen = {};
  try {
    const res = await fetch(${JSON.stringify(api + JAN)}, { headers: { Authorization: "Bearer ${KEY}" } });
    seen.status = res.status;
    seen.rows = await res.text();
    seen.etag = res.headers.get("ETag");
    seen.requestId = res.headers.get("X-Request-Id");
    const again = await fetch(${JSON.stringify(api + JAN)}, { headers: { Authorization: "Bearer ${KEY}", "If-None-Match": seen.etag }, cache: "no-store" });
    seen.revalidated = again.status;
  } catch (err) {
    seen.refused = String(err);
  }
  await fetch("/report", { method: "POST", body: JSON.stringify(seen) });
})();
</script>`;
}

/** Serves the dashboard on its own origin (127.0.0.1 and `port`; 0: any free one) and opens it in headless Chromium: what the page saw. */
async function dashboardSees(api: string, port = 0): Promise<Seen> {
  let report!: (seen: Seen) => void;
  const reported = new Promise<Seen>((resolve) => (report = resolve));
  const site = Bun.serve({
    hostname: "127.0.0.1",
    port,
    async fetch(req) {
      if (new URL(req.url).pathname === "/report") {
        report(JSON.parse(await req.text()));
        return new Response("ok");
      }
      return new Response(page(api), { headers: { "content-type": "text/html; charset=utf-8" } });
    },
  });
  const profile = mkdtempSync(join(tmpdir(), "pce-chromium-"));
  // The flags the machine's notes give: without the background-networking ones Chromium tries hosts this closed network refuses.
  const browser = Bun.spawn(
    [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", `--user-data-dir=${profile}`, `http://127.0.0.1:${site.port}/`],
    { stdout: "ignore", stderr: "pipe" },
  );
  try {
    return await Promise.race([reported, Bun.sleep(45_000).then(() => Promise.reject(new Error("the page reported nothing within 45 s")))]);
  } finally {
    browser.kill();
    await browser.exited;
    site.stop(true);
    rmSync(profile, { recursive: true, force: true });
  }
}

let bin: { dir: string; path: string };
let database: Record<string, string>;
beforeAll(async () => {
  bin = isolatedBinary();
  database = await fixtureDatabaseEnv(bin.path);
}, 60_000);

describe("a dashboard on another origin, in headless Chromium", () => {
  let listed: RunningBinary;
  let listedOrigin: string;
  let site: ReturnType<typeof Bun.serve> | undefined;
  beforeAll(async () => {
    // The listed page's origin is known before its server starts: reserve a port for it.
    site = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
    listedOrigin = `http://127.0.0.1:${site.port}`;
    site.stop(true);
    listed = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY, CORS_ALLOWED_ORIGINS: listedOrigin });
  }, 30_000);
  afterAll(async () => {
    await listed?.stop();
  });

  test("the listed page reads the rows, the ETag and the request id, and its conditional read is a 304", async () => {
    const seen = await dashboardSees(listed.url, Number(new URL(listedOrigin).port));
    expect(seen).toEqual({ status: 200, rows: JANUARY_NORMAL, etag: expect.stringMatching(/^"[A-Za-z0-9_-]{22}-json-br"$/), requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), revalidated: 304 });
    // The browser asked first: the preflight's line, answered 204.
    expect(await listed.waitForLine((l) => l.msg === "request" && l.method === "OPTIONS")).toMatchObject({ status: 204, path: "/external/v1/product-costs" });
  }, 60_000);

  test("a page of another origin is refused by the browser: its script never sees the answer", async () => {
    expect(await dashboardSees(listed.url)).toEqual({ refused: "TypeError: Failed to fetch" });
  }, 60_000);

  test("without CORS_ALLOWED_ORIGINS (the default) every page is refused, as before", async () => {
    const plain = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY });
    try {
      expect(await dashboardSees(plain.url)).toEqual({ refused: "TypeError: Failed to fetch" });
    } finally {
      expect(await plain.stop()).toBe(0);
    }
  }, 60_000);
});
