// Running the executable as an operator does, for real: keys rotated by SIGHUP while
// requests run, systemd credentials and digests, HTTPS with a certificate made here by
// openssl, graceful shutdown with a request in flight, health routes, the log lines, and
// bad configuration stopping the start with one line and exit code 2.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { appendFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Sql } from "../../src/database/client.ts";
import { JANUARY_NORMAL } from "../http/fixture.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { maskDatabaseUrl } from "../../src/settings/database-url.ts";
import { cleanEnv, fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { SERVER_URL, testDatabase } from "../support/database.ts";
import { unusedPort } from "../support/ports.ts";

const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";
const READ_ONLY_ROLE_SQL = resolve(import.meta.dir, "../../sql/roles/read-only-role.sql");
/** Nothing listens on port 1: the service starts (it connects lazily) and finds its database unreachable. */
const NO_DATABASE = { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere" };

let bin: { dir: string; path: string };
let work: string;
/** DATABASE_URL of the run's PostgreSQL, or DATA_DIR of an embedded copy of the fixture. */
let database: Record<string, string>;

beforeAll(async () => {
  bin = isolatedBinary();
  work = mkdtempSync(join(tmpdir(), "pce-ops-"));
  database = await fixtureDatabaseEnv(bin.path);
}, 60000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const r = Bun.spawnSync([bin.path, ...args], { env: cleanEnv(env), cwd: bin.dir, stdin: stdin === undefined ? "ignore" : Buffer.from(stdin) });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

const get = (server: RunningBinary, path: string, key?: string, init: RequestInit = {}) =>
  fetch(server.url + path, { ...init, headers: { ...(init.headers as Record<string, string> | undefined), ...(key ? { authorization: `Bearer ${key}` } : {}) } });

/** The fingerprint the log shows for a key: 8 hex digits of sha256 over the key's sha256 digest. */
function fingerprint(key: string): string {
  const digest = createHash("sha256").update(key).digest();
  return createHash("sha256").update(digest).digest("hex").slice(0, 8);
}

async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(25);
  }
}

/** Every byte the process wrote, to check that no secret ever appears in it. */
const everything = (server: RunningBinary) => JSON.stringify(server.lines) + server.stderr();

describe("API keys", () => {
  test("a key is rotated with SIGHUP (old and new together, then the old removed) and no request fails", async () => {
    const OLD = "rotation-old-key-4b1e";
    const NEW = "rotation-new-key-93ac";
    const file = join(work, "rotation-keys");
    writeFileSync(file, `# issued 2024-01\n${OLD}\n`);
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      const listening = server.lines.find((l) => l.msg === "listening");
      expect(listening).toMatchObject({ api_keys: 1 });
      expect(listening).not.toHaveProperty("key_fingerprints");

      // Clients keep calling with the old key, one request after another, the whole time.
      const statuses: number[] = [];
      let calling = true;
      const client = (async () => {
        while (calling) {
          const res = await get(server, JAN, OLD);
          const text = await res.text();
          statuses.push(res.status === 200 && text === JANUARY_NORMAL ? 200 : res.status);
        }
      })();
      await until("requests before the reload", () => statuses.length >= 3);

      writeFileSync(file, `${OLD}\n${NEW}\n`);
      server.proc.kill("SIGHUP");
      expect(await server.waitForLine((l) => l.msg === "api keys reloaded" && l.api_keys === 2)).toMatchObject({ level: "info", added: 1, removed: 0 });
      const seen = statuses.length;
      await until("requests after the reload", () => statuses.length >= seen + 3);
      calling = false;
      await client;
      expect(statuses.filter((s) => s !== 200)).toEqual([]);
      expect((await get(server, JAN, NEW)).status).toBe(200);

      writeFileSync(file, `${NEW}\n`);
      server.proc.kill("SIGHUP");
      expect(await server.waitForLine((l) => l.msg === "api keys reloaded" && l.api_keys === 1)).toMatchObject({ added: 0, removed: 1 });
      const old = await get(server, JAN, OLD);
      expect([old.status, await old.text()]).toEqual([401, '{"detail":"INVALID_API_KEY"}']);
      const withNew = await fetch(server.url + JAN, { headers: { authorization: `Bearer ${NEW}`, "x-request-id": "rotated-1" } });
      expect([withNew.status, await withNew.text()]).toEqual([200, JANUARY_NORMAL]);
      expect(await server.waitForLine((l) => l.request_id === "rotated-1")).toMatchObject({ status: 200, key: fingerprint(NEW) });
      expect(everything(server)).not.toContain(OLD);
      expect(everything(server)).not.toContain(NEW);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a reload of 100,000 keys logs counts, not lists; short keys get a warning, a few lines at most", async () => {
    const file = join(work, "many-keys");
    const many = Array.from({ length: 100_000 }, (_, i) => `bulk-key-${String(i).padStart(8, "0")}-0123456789`);
    writeFileSync(file, "short-key-1\n", { mode: 0o600 }); // private: only the short key is warned about
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      expect(await server.waitForLine((l) => l.msg === "weak API key")).toMatchObject({
        level: "warn",
        where: `${file} line 1: the key is shorter than 16 characters, which is easy to guess`,
      });
      writeFileSync(file, [...many, ...Array.from({ length: 8 }, (_, i) => `short-${i}`)].join("\n") + "\n");
      server.proc.kill("SIGHUP");
      const reloaded = await server.waitForLine((l) => l.msg === "api keys reloaded");
      expect(reloaded).toMatchObject({ api_keys: 100_008, added: 100_008, removed: 1 });
      expect(JSON.stringify(reloaded).length).toBeLessThan(300);
      await server.waitForLine((l) => l.msg === "weak API keys");
      const after = server.lines.slice(server.lines.indexOf(reloaded));
      expect(after.filter((l) => l.msg === "weak API key")).toHaveLength(5);
      expect(after.find((l) => l.msg === "weak API keys")).toMatchObject({ more: 3 });
      expect(Math.max(...server.lines.map((l) => JSON.stringify(l).length))).toBeLessThan(1000);
      expect((await get(server, JAN, many[77_777]!)).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a 4,001-key file copied in place while SIGHUPs arrive: no reload takes a piece of it, a valid key is never refused (issue 42)", async () => {
    // As `cp new api-keys` does: the old file truncated, then written in pieces. On 6069913
    // reloads took 1,075, 2,132 and 3,189 keys, and the last key got 401 for a third of its requests.
    const VALID = "still-valid-at-the-end-5a0b";
    const file = join(work, "copied-keys");
    const keysFile = (prefix: string) => Array.from({ length: 4000 }, (_, i) => `${prefix}-${String(i).padStart(5, "0")}-0123456789`).join("\n") + `\n${VALID}\n`;
    writeFileSync(file, keysFile("old-key"));
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      const statuses: number[] = [];
      let calling = true;
      const client = (async () => {
        while (calling) statuses.push((await get(server, JAN, VALID)).status);
      })();
      const hups = setInterval(() => server.proc.kill("SIGHUP"), 10);
      for (let round = 0; round < 3; round++) {
        const next = keysFile(`new-key-${round}`);
        writeFileSync(file, "");
        for (let at = 0; at < next.length; at += 32 * 1024) {
          appendFileSync(file, next.slice(at, at + 32 * 1024));
          await Bun.sleep(15);
        }
        await Bun.sleep(200);
      }
      clearInterval(hups);
      await server.waitForLine((l) => l.msg === "api keys reloaded" && l.added === 4000 && server.lines.indexOf(l) > 0, 10_000);
      await Bun.sleep(1500); // the last reload settles
      calling = false;
      await client;
      expect({ refused: statuses.filter((s) => s !== 200).length, requests: statuses.length > 20 }).toEqual({ refused: 0, requests: true });
      // Every reload took the whole file.
      expect(server.lines.filter((l) => l.msg === "api keys reloaded").map((l) => l.api_keys)).toEqual(expect.arrayContaining([4001]));
      expect(server.lines.filter((l) => l.msg === "api keys reloaded" && l.api_keys !== 4001)).toEqual([]);
      expect((await get(server, JAN, "new-key-2-03999-0123456789")).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);

  test("SIGHUP while the service starts (the embedded database takes seconds) is applied once it listens, never fatal (issue 42)", async () => {
    // It used to exit 129: the reload handler was installed only just before "listening".
    const BEFORE = "started-with-this-key-1d9e";
    const AFTER = "reloaded-to-this-key-6c2a";
    const file = join(work, "early-hup-keys");
    writeFileSync(file, `${BEFORE}\n`);
    const proc = Bun.spawn([bin.path, "serve"], {
      env: cleanEnv({ PORT: "0", HOST: "127.0.0.1", DEMO_DATA: "true", PRODUCT_COST_API_KEYS_FILE: file }),
      stdout: "pipe",
      stderr: "pipe",
    });
    let out = "";
    const reading = (async () => {
      for await (const chunk of proc.stdout) out += new TextDecoder().decode(chunk);
    })();
    const lines = () => out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Record<string, unknown>);
    try {
      await Bun.sleep(150);
      writeFileSync(file, `${AFTER}\n`);
      for (let i = 0; i < 3; i++) {
        expect(lines().some((l) => l.msg === "listening")).toBe(false); // still starting
        proc.kill("SIGHUP");
        await Bun.sleep(100);
      }
      await until("the listening line", () => lines().some((l) => l.msg === "listening") || proc.exitCode !== null);
      expect(proc.exitCode).toBeNull();
      await until("the reload's line", () => lines().some((l) => l.msg === "api keys reloaded"));
      const url = String(lines().find((l) => l.msg === "listening")!.url).replace(/\/$/, "");
      const days = "month_from=2026-01-01&month_to=2026-01-07&segment=sample";
      const [withAfter, withBefore] = await Promise.all([AFTER, BEFORE].map((key) => fetch(`${url}/external/v1/product-costs?${days}`, { headers: { authorization: `Bearer ${key}` } })));
      expect([withAfter!.status, withBefore!.status]).toEqual([200, 401]);
      // The three signals are one reload: it reads the files as they are now.
      expect(lines().filter((l) => l.msg === "api keys reloaded")).toEqual([expect.objectContaining({ api_keys: 1, added: 1, removed: 1 })]);
    } finally {
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      await reading;
    }
  }, 30_000);

  test("a key file that cannot be read, or holds no key, on SIGHUP keeps the active keys, and the log says why", async () => {
    const KEY = "unreadable-later-key-77d0";
    const file = join(work, "vanishing-keys");
    writeFileSync(file, `${KEY}\n`);
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      rmSync(file);
      server.proc.kill("SIGHUP");
      expect(await server.waitForLine((l) => l.msg === "api keys not reloaded, the previous keys stay active")).toMatchObject({
        level: "error",
        error: `cannot read API key file ${file}: ENOENT`,
        error_type: "ConfigError",
      });
      expect((await get(server, JAN, KEY)).status).toBe(200);

      writeFileSync(file, "sha256:not-a-digest\n");
      server.proc.kill("SIGHUP");
      expect(
        await server.waitForLine((l) => l.msg === "api keys not reloaded, the previous keys stay active" && String(l.error).includes("line 1")),
      ).toMatchObject({ error: `${file} line 1: a sha256: entry must be followed by 64 hex digits` });
      expect((await get(server, JAN, KEY)).status).toBe(200);

      // A readable file with no key: an editor's truncated save looks just like it.
      writeFileSync(file, "");
      server.proc.kill("SIGHUP");
      expect(
        await server.waitForLine((l) => l.msg === "api keys not reloaded, the previous keys stay active" && String(l.error).includes("holds no key")),
      ).toMatchObject({
        level: "error",
        error: `API key file ${file} holds no key (empty, or comments only: a truncated save?); to revoke every key, stop the service, or empty the file and restart it`,
        error_type: "ConfigError",
      });
      expect((await get(server, JAN, KEY)).status).toBe(200);
      expect(server.lines.some((l) => l.msg === "api keys reloaded")).toBe(false);
      expect(everything(server)).not.toContain(KEY);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("a key file replaced by a FIFO, then SIGHUP: the old keys still work, /healthz answers, one line says why, SIGTERM stops it (issue 52)", async () => {
    const KEY = "fifo-later-key-5c1a9e";
    const file = join(work, "fifo-later-keys");
    writeFileSync(file, `${KEY}\n`, { mode: 0o600 });
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    // Each call gives up: a service whose event loop is stuck answers nothing, and the test must say so, not hang.
    const soon = { signal: AbortSignal.timeout(5000) };
    try {
      rmSync(file);
      expect(Bun.spawnSync(["mkfifo", file]).exitCode).toBe(0);
      server.proc.kill("SIGHUP");
      const refused = (l: Record<string, unknown>) => l.msg === "api keys not reloaded, the previous keys stay active";
      expect(await server.waitForLine(refused, 5000)).toMatchObject({
        level: "error",
        error: `cannot read API key file ${file}: not a regular file (a FIFO)`,
        error_type: "ConfigError",
      });
      expect((await fetch(`${server.url}/healthz`, soon)).status).toBe(200);
      const res = await get(server, JAN, KEY, soon);
      expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
      expect(server.lines.filter(refused).length).toBe(1);
      expect(server.lines.some((l) => l.msg === "api keys reloaded")).toBe(false);
    } finally {
      const stopped = await Promise.race([server.stop(), Bun.sleep(10_000).then(() => "SIGTERM ignored")]);
      if (stopped !== 0) server.proc.kill("SIGKILL");
      expect(stopped).toBe(0);
    }
  });

  test("a key's expires= and rate= (issue 55, part 5): an expired key is an unknown key's 401 and a warn line; a key's own rate; list-keys and /metrics show them, never a key", async () => {
    const day = 86_400_000;
    const soon = new Date(Date.now() + 5 * day).toISOString().slice(0, 10);
    const later = new Date(Date.now() + 400 * day).toISOString().slice(0, 10);
    const [EXPIRED, SOON, PACED, OPEN] = ["expired-key-0123456789", "soon-key-0123456789ab", "paced-key-0123456789", "open-key-0123456789ab"];
    const file = join(work, "keys-with-terms");
    writeFileSync(
      file,
      [`${EXPIRED} expires=2020-01-01  # old laptop`, `${SOON} expires=${soon}  # BI team`, `sha256:${createHash("sha256").update(PACED).digest("hex")} rate=2 expires=${later}  # script`, OPEN, ""].join("\n"),
    );
    chmodSync(file, 0o600);
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      // At start, the operator hears of both: the expired key and the one that expires soon.
      expect(await server.waitForLine((l) => String(l.msg).startsWith("api keys expired"))).toMatchObject({ level: "warn", expired: 1, keys: ["old laptop"] });
      expect(await server.waitForLine((l) => String(l.msg).startsWith("api keys expire within 14 days"))).toMatchObject({ level: "warn", expiring: 1, keys: [`BI team ${soon}T00:00:00.000Z`] });
      // The client of the expired key gets exactly an unknown key's answer; its line says which key and since when, at warn.
      const refused = await get(server, JAN, EXPIRED, { headers: { "x-request-id": "expired-1" } });
      expect([refused.status, await refused.text()]).toEqual([401, '{"detail":"INVALID_API_KEY"}']);
      const unknown = await get(server, JAN, "never-a-key-0123456789");
      expect([unknown.status, await unknown.text()]).toEqual([401, '{"detail":"INVALID_API_KEY"}']);
      expect(await server.waitForLine((l) => l.request_id === "expired-1")).toMatchObject({ level: "warn", status: 401, key: "old laptop", key_expired_at: "2020-01-01T00:00:00.000Z", error: "INVALID_API_KEY" });
      // A key not yet expired reads; the paced key has its own allowance of 2 a minute (no RATE_LIMIT_PER_MINUTE is set).
      const ok = await get(server, JAN, SOON);
      expect([ok.status, ok.headers.get("ratelimit")]).toEqual([200, null]);
      await ok.text();
      const paced = [];
      for (let i = 0; i < 3; i++) {
        const res = await get(server, JAN, PACED);
        paced.push([res.status, res.headers.get("ratelimit-policy"), res.headers.get("ratelimit")]);
        await res.text();
      }
      expect(paced).toEqual([
        [200, '"per-key";q=2;w=60', '"per-key";r=1;t=30'],
        [200, '"per-key";q=2;w=60', '"per-key";r=0;t=60'],
        [429, '"per-key";q=2;w=60', '"per-key";r=0;t=60'],
      ]);
      const metrics = await (await get(server, "/metrics")).text();
      expect(metrics).toContain('product_cost_export_api_keys{state="active"} 3\nproduct_cost_export_api_keys{state="expired"} 1\n');
      expect(metrics).toContain(`product_cost_export_api_key_nearest_expiry_timestamp_seconds ${Date.parse(`${soon}T00:00:00Z`) / 1000}\n`);
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // list-keys: the operator's table and its JSON; never a key, the digest's first 12 hex digits.
    const listed = run(["list-keys", "--api-keys-file", file]);
    expect([listed.code, listed.stderr]).toEqual([0, ""]);
    const digest = (key: string) => `sha256:${createHash("sha256").update(key).digest("hex").slice(0, 12)}…`;
    const rows = listed.stdout.trimEnd().split("\n").map((line) => line.split(/  +/));
    expect(rows).toEqual([
      ["LABEL", "FINGERPRINT", "DIGEST", "EXPIRES", "STATE", "RATE", "SOURCE"],
      ["old laptop", fingerprint(EXPIRED), digest(EXPIRED), "2020-01-01T00:00:00.000Z", "expired", "none", `${file} line 1`],
      ["BI team", fingerprint(SOON), digest(SOON), `${soon}T00:00:00.000Z`, "expiring", "none", `${file} line 2`],
      ["script", fingerprint(PACED), digest(PACED), `${later}T00:00:00.000Z`, "active", "2/min", `${file} line 3`],
      ["-", fingerprint(OPEN), digest(OPEN), "never", "active", "none", `${file} line 4`],
    ]);
    const json = run(["list-keys", "--json"], { PRODUCT_COST_API_KEYS_FILE: file, RATE_LIMIT_PER_MINUTE: "30" });
    expect(JSON.parse(json.stdout).map((k: Record<string, unknown>) => [k.label, k.state, k.rate_per_minute])).toEqual([
      ["old laptop", "expired", 30],
      ["BI team", "expiring", 30],
      ["script", "active", 2],
      [null, "active", 30],
    ]);
    for (const key of [EXPIRED, SOON, PACED, OPEN]) expect(listed.stdout + json.stdout).not.toContain(key);
  });

  test("a key made by generate-key --label is logged and counted by its label; a readable file of plain keys is warned about", async () => {
    const made = run(["generate-key", "--label", "BI laptop"]);
    const [key, line] = made.stdout.trim().split("\n");
    const file = join(work, "labelled-keys");
    writeFileSync(file, `${line}\nplain-key-in-the-open-0123  # old script\n`);
    chmodSync(file, 0o644);
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
    try {
      expect(await server.waitForLine((l) => l.msg === "weak API key")).toMatchObject({
        level: "warn",
        where: `${file} holds plain keys and is readable by group or others (mode 0644): chmod 600 it, or keep only sha256: digests there`,
      });
      const res = await get(server, JAN, key!, { headers: { "x-request-id": "labelled-1" } });
      expect(res.status).toBe(200);
      await res.text();
      expect(await server.waitForLine((l) => l.request_id === "labelled-1")).toMatchObject({ status: 200, key: "BI laptop" });
      const metrics = await (await get(server, "/metrics")).text();
      expect(metrics).toContain('product_cost_export_requests_by_key_total{key="BI laptop",status="200"} 1\n');
      const plain = await get(server, JAN, "plain-key-in-the-open-0123");
      await plain.text();
      expect(await (await get(server, "/metrics")).text()).toContain('product_cost_export_requests_by_key_total{key="old script",status="200"} 1\n');
      expect(everything(server)).not.toContain(key!);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("systemd credentials and sha256 digests (made by hash-key) stand in for plain keys", async () => {
    const FROM_CREDENTIAL = "credential-key-0c5f";
    const FROM_ENV = "env-digest-key-e2a8";
    const digest = (key: string) => {
      const r = run(["hash-key"], {}, `${key}\n`);
      expect([r.code, r.stderr]).toEqual([0, ""]);
      return r.stdout.trim();
    };
    const credentials = join(work, "credentials");
    mkdirSync(credentials);
    writeFileSync(join(credentials, "product-cost-api-keys"), `# LoadCredential=product-cost-api-keys:/etc/product-cost-export/api-keys\n${digest(FROM_CREDENTIAL)}\n`);
    const server = await startBinary(
      bin.path,
      { ...database, CREDENTIALS_DIRECTORY: credentials, PRODUCT_COST_API_KEYS: digest(FROM_ENV) },
      [],
      bin.dir,
    );
    try {
      expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ api_keys: 2 });
      for (const key of [FROM_CREDENTIAL, FROM_ENV]) {
        const res = await get(server, JAN, key);
        expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
      }
      const digestAsKey = await get(server, JAN, digest(FROM_ENV));
      expect(digestAsKey.status).toBe(401); // a digest is not a key
      expect(everything(server)).not.toContain(FROM_CREDENTIAL);
      expect(everything(server)).not.toContain(FROM_ENV);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("bad configuration stops the start with one line on stderr and exit code 2", () => {
  let busy: { port: number; stop(closeActive?: boolean): void };
  let files: Record<string, string>;
  beforeAll(async () => {
    busy = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    files = await certificates();
    mkdirSync(join(work, "keys-dir"), { recursive: true });
    writeFileSync(join(work, "garbage.pem"), "not a certificate\n");
  });
  afterAll(() => busy.stop(true));

  const cases: [string, () => string[], () => Record<string, string>, () => string][] = [
    ["the port is in use", () => ["--port", String(busy.port)], () => ({}), () => `port ${busy.port} on 127.0.0.1 is already in use`],
    ["the certificate is not PEM", () => [], () => ({ TLS_CERT_FILE: join(work, "garbage.pem"), TLS_KEY_FILE: files.key1! }),
      () => "TLS certificate or key rejected: error:0900006e:PEM routines:OPENSSL_internal:NO_START_LINE"],
    ["the key does not match the certificate", () => [], () => ({ TLS_CERT_FILE: files.cert1!, TLS_KEY_FILE: files.key2! }),
      () => "TLS certificate or key rejected: error:0b000074:X.509 certificate routines:OPENSSL_internal:KEY_VALUES_MISMATCH"],
    ["the TLS key file is missing", () => ["--tls-cert-file", files.cert1!, "--tls-key-file", join(work, "no-such-key.pem")], () => ({}),
      () => `cannot read TLS_KEY_FILE ${join(work, "no-such-key.pem")}: ENOENT`],
    ["half a TLS pair", () => ["--tls-cert-file", files.cert1!], () => ({}), () => "TLS_CERT_FILE and TLS_KEY_FILE must be set together"],
    ["TLS_CIPHERS names no known suite", () => ["--tls-ciphers", "NOPE"], () => ({ TLS_CERT_FILE: files.cert1!, TLS_KEY_FILE: files.key1! }),
      () => 'TLS_CIPHERS names no cipher suite this build knows: "NOPE"'],
    ["the key file is a directory", () => [], () => ({ PRODUCT_COST_API_KEYS_FILE: join(work, "keys-dir") }),
      () => `cannot read API key file ${join(work, "keys-dir")}: EISDIR`],
    ["a digest is malformed", () => [], () => ({ PRODUCT_COST_API_KEYS: "sha256:abc" }),
      () => "PRODUCT_COST_API_KEYS entry 1: a sha256: entry must be followed by 64 hex digits"],
    ["the database URL is malformed", () => ["--database-url", "postgres://u:s3cret@db:port/x"], () => ({}),
      () => '--database-url: port "port" is not a number from 1 to 65535 (expected postgres://user:password@host:5432/database)'],
  ];
  test.each(cases)("when %s", (_, args, env, message) => {
    const r = run(["serve", ...args()], { ...NO_DATABASE, HOST: "127.0.0.1", PORT: "0", ...env() });
    expect(r).toEqual({ code: 2, stdout: "", stderr: `product-cost-export: ${message()}\n` });
  });
});

describe("a key file that is not a regular file stops the start at once, exit 2 and one line (issue 52)", () => {
  let fifo: string;
  beforeAll(() => {
    fifo = join(work, "keys-fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
  });

  // It was a process that never listened nor logged (on /dev/zero, growing to 5.5 GB): killed at the limit, it fails here.
  test.each([
    ["a FIFO", () => fifo, "not a regular file (a FIFO)"],
    ["/dev/zero", () => "/dev/zero", "not a regular file (a character device)"],
  ])("when it is %s", (_, file, problem) => {
    const started = performance.now();
    const r = Bun.spawnSync([bin.path, "serve"], {
      env: cleanEnv({ ...NO_DATABASE, HOST: "127.0.0.1", PORT: "0", PRODUCT_COST_API_KEYS_FILE: file() }),
      cwd: bin.dir,
      stdin: "ignore",
      timeout: 10_000,
    });
    expect({ code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() }).toEqual({
      code: 2,
      stdout: "",
      stderr: `product-cost-export: cannot read API key file ${file()}: ${problem}\n`,
    });
    expect(performance.now() - started).toBeLessThan(5000);
  });
});

/** A self-signed certificate for 127.0.0.1, made with openssl: cert1/key1 and a second pair cert2/key2. */
async function certificates(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const n of [1, 2]) {
    const cert = join(work, `cert${n}.pem`);
    const key = join(work, `key${n}.pem`);
    if (!Bun.file(cert).size) {
      const p = Bun.spawn(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", key, "-out", cert, "-days", "2", "-subj", `/CN=pce-test-${n}`, "-addext", "subjectAltName=IP:127.0.0.1"],
        { stdout: "ignore", stderr: "pipe" });
      if ((await p.exited) !== 0) throw new Error(`openssl failed: ${await new Response(p.stderr).text()}`);
    }
    out[`cert${n}`] = cert;
    out[`key${n}`] = key;
  }
  return out;
}

/** The subject of the certificate the server presents in a real TLS handshake, as openssl s_client sees it. */
async function servedSubject(url: string): Promise<string> {
  const { port } = new URL(url);
  const p = Bun.spawn(["sh", "-c", `openssl s_client -connect 127.0.0.1:${port} </dev/null 2>/dev/null | openssl x509 -noout -subject`], {
    stdout: "pipe",
  });
  const text = await new Response(p.stdout).text();
  await p.exited;
  return text.trim();
}

describe("HTTPS", () => {
  test("serves HTTPS with the configured certificate; SIGHUP says a changed one needs a restart, and a restart serves it", async () => {
    const KEY = "https-key-51de";
    const files = await certificates();
    const cert = join(work, "served-cert.pem");
    const key = join(work, "served-key.pem");
    writeFileSync(cert, await Bun.file(files.cert1!).text());
    writeFileSync(key, await Bun.file(files.key1!).text());
    const env = { ...database, PRODUCT_COST_API_KEYS: KEY, TLS_CERT_FILE: cert, TLS_KEY_FILE: key };
    const ca1 = await Bun.file(files.cert1!).text();
    const ca2 = await Bun.file(files.cert2!).text();

    let server = await startBinary(bin.path, env, [], bin.dir);
    try {
      expect(server.url).toStartWith("https://127.0.0.1:");
      // The certificate is verified against the one made above: a real handshake, no verification switched off.
      const res = await fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}` }, tls: { ca: ca1 } });
      expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
      expect(await servedSubject(server.url)).toBe("subject=CN = pce-test-1");
      const plain = await fetch(server.url.replace("https:", "http:") + "/healthz").then((r) => r.status, (e: Error) => e.name);
      expect(plain).not.toBe(200);

      writeFileSync(cert, ca2);
      writeFileSync(key, await Bun.file(files.key2!).text());
      server.proc.kill("SIGHUP");
      expect(await server.waitForLine((l) => String(l.msg).startsWith("TLS certificate or key changed on disk"))).toEqual({
        time: expect.any(String),
        level: "warn",
        msg: "TLS certificate or key changed on disk: restart the service to serve it (a running server keeps its certificate)",
        tls_cert_file: cert,
      });
      expect(await servedSubject(server.url)).toBe("subject=CN = pce-test-1");
    } finally {
      expect(await server.stop()).toBe(0);
    }

    server = await startBinary(bin.path, env, [], bin.dir);
    try {
      expect(await servedSubject(server.url)).toBe("subject=CN = pce-test-2");
      const res = await fetch(server.url + "/healthz", { tls: { ca: ca2 } });
      expect([res.status, await res.json()]).toEqual([200, { detail: "OK", version: expect.stringMatching(/^\d+\.\d+\.\d+$/), commit: expect.any(String) }]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("health routes and logs", () => {
  test("with the database unreachable: /healthz 200, /readyz 503, the API 503, the cause logged once at error, and each poll's line at info", async () => {
    const KEY = "unreachable-key-3f70";
    const server = await startBinary(bin.path, { ...NO_DATABASE, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    try {
      const health = await get(server, "/healthz");
      expect([health.status, await health.json()]).toEqual([200, { detail: "OK", version: expect.any(String), commit: expect.any(String) }]);
      const ready = await get(server, "/readyz");
      expect([ready.status, await ready.json()]).toEqual([
        503,
        {
          detail: "DATABASE_UNAVAILABLE",
          cause: "PostgreSQL cannot be reached or did not answer in time",
          fix: "check that PostgreSQL is running and reachable at the host and port of DATABASE_URL",
        },
      ]);
      const api = await fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}`, "x-request-id": "unreachable-1" } });
      expect([api.status, await api.text()]).toEqual([503, '{"detail":"DATABASE_UNAVAILABLE"}']);
      const line = await server.waitForLine((l) => l.request_id === "unreachable-1");
      // The start-up check found the database gone, so the guard answers at once with what it
      // knows: at info, the episode's own line ("database not usable") is the error.
      expect(line).toMatchObject({ level: "info", msg: "request", status: 503, key: fingerprint(KEY), problem: "DATABASE_UNAVAILABLE" });
      expect(String(line.error)).toContain("ECONNREFUSED");
      // A balancer's polls: each /readyz 503 logged with its cause and fix, not bare, at info.
      for (let poll = 0; poll < 3; poll++) expect((await get(server, "/readyz")).status).toBe(503);
      await server.waitForLine((l) => l.msg === "request" && l.path === "/readyz" && server.lines.filter((m) => m.path === "/readyz").length === 4);
      expect(server.lines.filter((l) => l.msg === "request" && l.path === "/readyz").map((l) => [l.level, l.status, l.problem, l.fix])).toEqual(
        Array(4).fill(["info", 503, "DATABASE_UNAVAILABLE", "check that PostgreSQL is running and reachable at the host and port of DATABASE_URL"]),
      );
      expect(server.lines.find((l) => l.msg === "request" && l.path === "/readyz")?.error).toContain("ECONNREFUSED");
      // The problem itself: one line at error, from the start on, however often it is polled.
      expect(server.lines.filter((l) => l.level === "error").map((l) => [l.msg, l.problem])).toEqual([["database not usable", "DATABASE_UNAVAILABLE"]]);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("MONITORING_PORT: health, readiness, metrics and docs on their own listener, 404 on the API's; the API on the API's alone (issue 46)", async () => {
    const KEY = "monitoring-key-7c21";
    const monitoringPort = unusedPort();
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY, MONITORING_PORT: String(monitoringPort) }, [], bin.dir);
    const monitoring = `http://127.0.0.1:${monitoringPort}`;
    try {
      expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ monitoring_url: `${monitoring}/` });
      const status = async (base: string, path: string) => (await fetch(base + path, { headers: { authorization: `Bearer ${KEY}` } })).status;
      for (const path of ["/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"]) {
        expect([path, await status(monitoring, path), await status(server.url, path)]).toEqual([path, 200, 404]);
      }
      // The body of a path the listener does not serve is the unknown path's, byte for byte.
      const hidden = await fetch(server.url + "/metrics/");
      expect([hidden.status, await hidden.text()]).toEqual([404, '{"detail":"Not Found"}']);
      expect([await status(server.url, JAN), await status(monitoring, JAN)]).toEqual([200, 404]);
      // One set of metrics for both listeners: the API's request is counted on the monitoring one.
      const metrics = await (await fetch(monitoring + "/metrics")).text();
      expect(metrics).toContain('product_cost_export_http_requests_total{method="GET",route="/external/v1/product-costs",status="200"} 1');
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("one JSON line per request with exactly: time, level, msg, request id, method, path, status, duration, rows, key, what it asked, how it was answered, its trace", async () => {
    const KEY = "log-fields-key-a0b1";
    const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    try {
      // identity: `bytes` is then the JSON's own length (compressed, it would be the gzip's).
      const headers = { authorization: `Bearer ${KEY}`, "accept-encoding": "identity", "user-agent": "fields-test/1.0", "x-forwarded-for": "203.0.113.9" };
      await (await fetch(server.url + JAN, { headers: { ...headers, "x-request-id": "fields-1", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" } })).text();
      await (await fetch(server.url + "/healthz", { headers: { "x-request-id": "fields-2" } })).text();
      await (await fetch(server.url + "/nowhere", { headers: { "x-request-id": "fields-3" } })).text();
      const line = await server.waitForLine((l) => l.request_id === "fields-1");
      expect(line).toEqual({
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        level: "info",
        msg: "request",
        request_id: "fields-1",
        method: "GET",
        path: "/external/v1/product-costs",
        status: 200,
        duration_ms: expect.any(Number),
        bytes: Buffer.byteLength(JANUARY_NORMAL),
        rows: 6,
        key: fingerprint(KEY),
        // What it asked (the lax dates as read) and how it was answered (issue 55).
        month_from: "2024-01-01",
        month_to: "2024-01-31",
        segment: "normal",
        format: "json",
        encoding: "identity",
        source: "rollup",
        kept: true,
        first_rows_ms: expect.any(Number),
        trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
        span_id: expect.stringMatching(/^[0-9a-f]{16}$/),
        // No TRUSTED_PROXIES: the peer, whatever X-Forwarded-For claims.
        client: "127.0.0.1",
        user_agent: "fields-test/1.0",
      });
      expect(await server.waitForLine((l) => l.request_id === "fields-3")).toMatchObject({ level: "info", path: "/nowhere", status: 404, bytes: 22 });
      // A successful health poll is logged at debug, below this level.
      expect(server.lines.some((l) => l.request_id === "fields-2")).toBe(false);
      expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({
        level: "info",
        version: expect.stringMatching(/^\d+\.\d+\.\d+$/),
        commit: expect.any(String),
        url: server.url + "/",
        api_keys: 1,
      });
      expect(await server.stop("SIGINT")).toBe(0);
      expect(server.lines.slice(-2)).toEqual([
        { time: expect.any(String), level: "info", msg: "shutting down", signal: "SIGINT", in_flight: 0 },
        { time: expect.any(String), level: "info", msg: "stopped" },
      ]);
      expect(server.stderr()).toBe("");
    } finally {
      await server.stop();
    }
  });

  test("TRUSTED_PROXIES: behind a trusted proxy the client is the address it forwarded; a health poll shows at LOG_LEVEL=debug", async () => {
    const server = await startBinary(bin.path, { ...NO_DATABASE, TRUSTED_PROXIES: "127.0.0.0/8, ::1", LOG_LEVEL: "debug" }, [], bin.dir);
    try {
      for (const [id, forwarded] of [["xff-1", "198.51.100.7"], ["xff-2", "198.51.100.7, 10.9.9.9, 127.0.0.1"], ["xff-3", "not-an-address"]] as const) {
        await (await fetch(server.url + "/healthz", { headers: { "x-request-id": id, "x-forwarded-for": forwarded } })).text();
      }
      expect(await server.waitForLine((l) => l.request_id === "xff-1")).toMatchObject({ level: "debug", client: "198.51.100.7" });
      // From the right: 127.0.0.1 is trusted, 10.9.9.9 is not, so it is the client (what it says of others is not believed).
      expect(await server.waitForLine((l) => l.request_id === "xff-2")).toMatchObject({ client: "10.9.9.9" });
      expect(await server.waitForLine((l) => l.request_id === "xff-3")).toMatchObject({ client: "127.0.0.1" });
      // Debug also shows the pool's reconnect attempts to the database that is down.
      expect(await server.waitForLine((l) => l.msg === "database connection retry")).toMatchObject({ level: "debug", attempt: expect.any(Number) });
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("LOG_FORMAT=pretty writes readable lines for a terminal", async () => {
    const server = await startBinary(bin.path, { ...NO_DATABASE, LOG_FORMAT: "pretty" }, [], bin.dir, {
      ready: (l) => typeof l.raw === "string" && / INFO {2}listening /.test(l.raw),
      url: (l) => /url=(\S+)/.exec(String(l.raw))![1]!,
    });
    try {
      await (await fetch(server.url + "/nowhere", { headers: { "x-request-id": "pretty-1", "user-agent": "probe" } })).text();
      const line = String((await server.waitForLine((l) => String(l.raw).includes("request_id=pretty-1"))).raw);
      expect(line).toMatch(
        /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z INFO {2}request request_id=pretty-1 method=GET path=\/nowhere status=404 duration_ms=[\d.]+ bytes=22 client=127\.0\.0\.1 user_agent=probe$/,
      );
      expect(server.lines.every((l) => typeof l.raw === "string")).toBe(true); // no JSON at all
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });

  test("under journald (JOURNAL_STREAM names stdout) each line starts with its syslog priority; elsewhere it does not", async () => {
    const out = join(work, "journal-stream.log");
    writeFileSync(out, "");
    const { dev, ino } = statSync(out);
    const lines = async (journalStream: string) => {
      const proc = Bun.spawn([bin.path, "--port", "0"], { env: cleanEnv({ ...NO_DATABASE, JOURNAL_STREAM: journalStream }), stdout: Bun.file(out), stderr: "ignore" });
      for (let i = 0; i < 500 && !readFileSync(out, "utf8").includes("database not usable"); i++) await Bun.sleep(20);
      proc.kill("SIGTERM");
      expect(await proc.exited).toBe(0);
      return readFileSync(out, "utf8").split("\n").filter(Boolean);
    };
    const journal = await lines(`${dev}:${ino}`);
    const first = (msg: string) => journal.find((l) => l.includes(`"msg":"${msg}"`))?.slice(0, 12);
    expect([first("listening"), first("no API key configured: every request to /external/v1/product-costs answers 503 EXTERNAL_API_NOT_CONFIGURED"), first("database not usable")]).toEqual([
      '<6>{"time":"',
      '<4>{"time":"',
      '<3>{"time":"',
    ]);
    expect(journal.every((l) => /^<[3467]>\{/.test(l))).toBe(true);
    // The variable alone (inherited by a shell, say) is not journald: plain JSON.
    writeFileSync(out, "");
    expect((await lines("1:2")).every((l) => l.startsWith("{"))).toBe(true);
  });

  test("SIGTERM while the database is down: exit 0 at once, not after the pool's 5 s grace", async () => {
    // The start-up readiness check is still retrying a database that refuses connections.
    const server = await startBinary(bin.path, { ...NO_DATABASE }, [], bin.dir);
    const started = performance.now();
    expect(await server.stop()).toBe(0);
    expect(performance.now() - started).toBeLessThan(1500);
    expect(server.lines.at(-1)).toMatchObject({ msg: "stopped" });
  });

  test("LOG_LEVEL=warn drops the info lines (requests that went well, start, stop) and keeps warnings and errors", async () => {
    // No line carries the URL at this level, so the port is chosen here.
    const port = unusedPort();
    const server = await startBinary(bin.path, { ...NO_DATABASE, LOG_LEVEL: "warn" }, ["--port", String(port)], bin.dir, {
      ready: (l) => String(l.msg).startsWith("no API key configured"),
      url: () => `http://127.0.0.1:${port}`,
    });
    try {
      expect((await fetch(server.url + "/healthz")).status).toBe(200);
      expect((await fetch(server.url + JAN, { headers: { "x-request-id": "warn-1" } })).status).toBe(503);
      await server.waitForLine((l) => l.request_id === "warn-1");
    } finally {
      expect(await server.stop()).toBe(0);
    }
    // The start-up check's lines and the request's may come in either order.
    expect(server.lines.map((l) => `${l.level} ${l.msg}`).sort()).toEqual([
      "error database not usable",
      "error request",
      "warn no API key configured: every request to /external/v1/product-costs answers 503 EXTERNAL_API_NOT_CONFIGURED",
    ]);
  });
});

describe("systemd", () => {
  const unitText = (kind?: string) => {
    const r = run(kind ? ["systemd-unit", kind] : ["systemd-unit"]);
    expect([r.code, r.stderr]).toEqual([0, ""]);
    return r.stdout;
  };

  test("systemd-unit prints a hardened unit that starts /usr/local/bin/product-cost-export, or --exec-path", () => {
    const lines = unitText().split("\n");
    for (const line of [
      "Type=notify",
      "ExecStartPre=+/usr/local/bin/product-cost-export stage-files",
      "ExecStart=/usr/local/bin/product-cost-export serve",
      "ExecReload=+/usr/local/bin/product-cost-export stage-files --reload $MAINPID",
      "RuntimeDirectory=product-cost-export",
      "Environment=CREDENTIALS_DIRECTORY=%t/product-cost-export",
      "EnvironmentFile=/etc/product-cost-export/env",
      "ConditionPathExists=/etc/product-cost-export/env",
      "DynamicUser=yes",
      "ProtectSystem=strict",
      "NoNewPrivileges=yes",
      "Restart=on-failure",
      "RestartPreventExitStatus=2",
      "CapabilityBoundingSet=",
      "WantedBy=multi-user.target",
      "Documentation=man:product-cost-export(1) file:/usr/share/doc/product-cost-export/README.md",
    ]) {
      expect(lines).toContain(line);
    }
  });

  test("systemd-unit refresh prints the refresh as a sandboxed oneshot with its own database URL, and refresh-timer its timer", () => {
    const service = unitText().split("\n");
    const refresh = unitText("refresh").split("\n");
    for (const line of ["ExecStart=/usr/local/bin/product-cost-export refresh", "Type=oneshot", "EnvironmentFile=/etc/product-cost-export/refresh.env", "CapabilityBoundingSet="]) {
      expect(refresh).toContain(line);
    }
    // The same sandbox as the service.
    for (const line of service.filter((l) => /^(DynamicUser|ProtectSystem|NoNewPrivileges|SystemCallFilter|RestrictAddressFamilies)=/.test(l))) {
      expect(refresh).toContain(line);
    }
    expect(refresh.some((l) => /^(LoadCredential|ExecStartPre|RuntimeDirectory)=/.test(l))).toBe(false); // no API keys
    const timer = unitText("refresh-timer").split("\n");
    for (const line of ["[Timer]", "OnUnitInactiveSec=1min", "WantedBy=timers.target"]) expect(timer).toContain(line);
    // Each unit points `systemctl help` at the manual page and the README, as the service does.
    const documentation = service.filter((l) => l.startsWith("Documentation="));
    expect(documentation).toEqual(["Documentation=man:product-cost-export(1) file:/usr/share/doc/product-cost-export/README.md"]);
    expect(refresh.filter((l) => l.startsWith("Documentation="))).toEqual(documentation);
    expect(timer.filter((l) => l.startsWith("Documentation="))).toEqual(documentation);
    expect(run(["systemd-unit", "timer"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'product-cost-export: systemd-unit prints one of: service, refresh, refresh-timer (not "timer")\n',
    });
  });

  // Never green by absence: without systemd-analyze (Debian package systemd) this is reported as skipped.
  test.skipIf(!Bun.which("systemd-analyze"))("systemd-analyze verifies the units and rates the services' exposure 2 or better (skipped where systemd-analyze is not installed)", () => {
    // verify runs man for each Documentation=man: page: the one this executable prints, as the .deb installs it.
    const page = run(["man-page"]);
    expect([page.code, page.stderr]).toEqual([0, ""]);
    mkdirSync(join(work, "man/man1"), { recursive: true });
    writeFileSync(join(work, "man/man1/product-cost-export.1"), page.stdout);
    for (const [kind, file] of [["service", "product-cost-export.service"], ["refresh", "product-cost-export-refresh.service"], ["refresh-timer", "product-cost-export-refresh.timer"]] as const) {
      const unit = join(work, file);
      // verify checks that ExecStart= exists: this copy of the executable.
      const text = run(["systemd-unit", kind, "--exec-path", bin.path]);
      expect([text.code, text.stderr]).toEqual([0, ""]);
      writeFileSync(unit, text.stdout);
      // The timer names its service: verify looks for it beside the timer.
      const verify = Bun.spawnSync(["systemd-analyze", "verify", unit], { stdout: "pipe", stderr: "pipe", cwd: work, env: { ...process.env, MANPATH: join(work, "man") } });
      // verify exits 0 even for unknown keys or bad values, which it only reports on stderr.
      expect([kind, verify.exitCode, verify.stderr.toString()]).toEqual([kind, 0, ""]);
      if (kind === "refresh-timer") continue;
      const security = Bun.spawnSync(["systemd-analyze", "security", "--offline=true", "--threshold=20", unit], { stdout: "pipe", stderr: "pipe" });
      const exposure = /Overall exposure level for \S+: ([\d.]+)/.exec(security.stdout.toString())?.[1];
      expect([kind, security.exitCode, Number(exposure) <= 2]).toEqual([kind, 0, true]);
    }
  });

  test("systemd-unit takes --exec-path and no settings (they belong in the environment file)", () => {
    expect(run(["systemd-unit", "refresh", "--exec-path", "/opt/pce/product-cost-export"]).stdout.split("\n")).toContain("ExecStart=/opt/pce/product-cost-export refresh");
    expect(run(["systemd-unit", "--port", "80"])).toEqual({
      code: 2,
      stdout: "",
      stderr: "product-cost-export: --port is a setting of serve, not of systemd-unit (see systemd-unit --help)\n",
    });
    expect(run(["systemd-unit", "--exec-path", "bin/product-cost-export"])).toEqual({
      code: 2,
      stdout: "",
      stderr: 'product-cost-export: systemd-unit: --exec-path must be an absolute path without spaces, got "bin/product-cost-export"\n',
    });
  });

  test("systemd-unit warns when the executable lives under /root or /home, which the unit hides", () => {
    const r = run(["systemd-unit", "--exec-path", "/home/ann/product-cost-export"]);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")).toContain("ExecStart=/home/ann/product-cost-export serve");
    expect(r.stderr).toBe(
      "product-cost-export: warning: /home/ann/product-cost-export is under /root or /home, which the unit hides (ProtectHome=yes): install the executable as /usr/local/bin/product-cost-export and use that path\n",
    );
  });

});

// Holding a request in flight needs a second session on the same database that can lock
// the tables the query reads, and roles and empty databases need a server: a real
// PostgreSQL (reported as skipped where there is none).
describeWithPostgres("the executable on a real PostgreSQL", () => {
  /** Locks every table the service reads, so its query waits; resolves once the lock is held. */
  async function lockTables(admin: Sql): Promise<() => Promise<void>> {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let locked!: () => void;
    const held = new Promise<void>((r) => (locked = r));
    const transaction = admin.begin(async (tx) => {
      const tables = await tx<{ name: string }[]>`
        select format('%I.%I', schemaname, tablename) as name from pg_tables
        where schemaname = current_schema() and tablename <> 'schema_migrations'`;
      await tx.unsafe(`lock table ${tables.map((t) => t.name).join(", ")} in access exclusive mode`);
      locked();
      await released;
    });
    await Promise.race([held, transaction]);
    return async () => {
      release();
      await transaction;
    };
  }

  /** Resolves once the service has a query waiting on a lock: its request is in flight. */
  async function waitingQueries(admin: Sql, count: number): Promise<void> {
    await until(`${count} service queries waiting on the lock`, async () => {
      const [row] = await admin<{ n: number }[]>`
        select count(*)::int as n from pg_stat_activity
        where datname = current_database() and split_part(application_name, ' ', 1) = 'product-cost-export' and wait_event_type = 'Lock'`;
      return row!.n >= count;
    });
  }

  describe("against a real PostgreSQL", () => {
    let admin: Sql;
    beforeAll(async () => {
      admin = (await testDatabase()).admin;
    });

    test("SIGTERM stops accepting, finishes the request in flight, closes the pool and exits 0", async () => {
      const KEY = "drain-key-6c2d";
      const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      const release = await lockTables(admin);
      let inFlight: Promise<[number, string]> | undefined;
      try {
        inFlight = fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}`, "x-request-id": "in-flight-1" } }).then(
          async (r) => [r.status, await r.text()] as [number, string],
        );
        await waitingQueries(admin, 1);
        server.proc.kill("SIGTERM");
        expect(await server.waitForLine((l) => l.msg === "shutting down")).toMatchObject({ signal: "SIGTERM", in_flight: 1 });
        await until("new connections refused", () =>
          fetch(server.url + "/healthz").then(() => false, (e: { code?: string }) => e.code === "ECONNREFUSED"),
        );
        expect(server.proc.exitCode).toBeNull(); // still draining
      } finally {
        await release();
      }
      expect(await inFlight).toEqual([200, JANUARY_NORMAL]);
      expect(await server.proc.exited).toBe(0);
      const messages = server.lines.map((l) => l.request_id ?? l.msg);
      expect(messages.slice(messages.indexOf("shutting down"))).toEqual(["shutting down", "in-flight-1", "stopped"]);
      expect(server.stderr()).toBe("");
    });

    test("a request that outlasts SHUTDOWN_TIMEOUT_MS is cut, and the process still exits 0", async () => {
      const KEY = "drain-timeout-key-1e9b";
      const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: KEY, SHUTDOWN_TIMEOUT_MS: "200" }, [], bin.dir);
      const release = await lockTables(admin);
      try {
        const inFlight = fetch(server.url + JAN, { headers: { authorization: `Bearer ${KEY}` } }).then(
          (r) => r.text().then(() => "answered"),
          () => "cut",
        );
        await waitingQueries(admin, 1);
        server.proc.kill("SIGTERM");
        expect(await server.waitForLine((l) => l.msg === "shutdown timeout reached, closing the remaining connections")).toMatchObject({
          level: "warn",
          in_flight: 1,
        });
        expect(await server.proc.exited).toBe(0);
        expect(await inFlight).toBe("cut");
        // Cut by the service, not by its client: never a 499 "client closed".
        const line = server.lines.find((l) => l.msg === "request" && l.path === "/external/v1/product-costs");
        expect(line).toMatchObject({ level: "warn", status: 503, error_code: "SHUTDOWN_TIMEOUT" });
        expect(String(line?.error)).toContain("SHUTDOWN_TIMEOUT_MS, 200 ms");
      } finally {
        await release();
      }
    });

    test("SIGHUP removes a key while a request admitted with it is in flight: that request completes, new ones get 401", async () => {
      const OLD = "inflight-old-key-8d3a";
      const NEW = "inflight-new-key-2f6b";
      const file = join(work, "inflight-keys");
      writeFileSync(file, `${OLD}\n`);
      const server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS_FILE: file }, [], bin.dir);
      try {
        const release = await lockTables(admin);
        let inFlight: Promise<[number, string]>;
        try {
          inFlight = fetch(server.url + JAN, { headers: { authorization: `Bearer ${OLD}` } }).then(
            async (r) => [r.status, await r.text()] as [number, string],
          );
          await waitingQueries(admin, 1);
          writeFileSync(file, `${NEW}\n`);
          server.proc.kill("SIGHUP");
          await server.waitForLine((l) => l.msg === "api keys reloaded");
          expect((await get(server, JAN, OLD)).status).toBe(401);
        } finally {
          await release();
        }
        expect(await inFlight).toEqual([200, JANUARY_NORMAL]);
        expect((await get(server, JAN, NEW)).status).toBe(200);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });

    test("the timer's refresh with nothing to fold writes nothing at info (one JSON line at debug); one that folds, its summary (issue 46)", async () => {
      const db = await testDatabase();
      // Whatever an earlier test left, then the answers an idle run renders (up to 2 s a run).
      for (let i = 0; i < 2; i++) expect(run(["refresh"], { DATABASE_URL: db.url }).code).toBe(0);
      const idle = run(["refresh"], { DATABASE_URL: db.url });
      expect(idle).toEqual({ code: 0, stdout: "", stderr: "" });
      const debug = run(["refresh"], { DATABASE_URL: db.url, LOG_LEVEL: "debug" });
      const lines = debug.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
      expect([debug.code, debug.stderr, lines.filter((l) => l.msg === "refreshed").map((l) => [l.level, l.mode])]).toEqual([0, "", [["debug", "none"]]]);
      // A change and its undoing: two notes to fold, and the data as the other tests expect it.
      for (let i = 0; i < 2; i++) await admin`update products set is_sample = not is_sample where product_id = (select min(product_id) from products)`;
      const folded = run(["refresh"], { DATABASE_URL: db.url });
      expect([folded.code, folded.stderr]).toEqual([0, ""]);
      expect(JSON.parse(folded.stdout)).toMatchObject({ level: "info", msg: "refreshed", mode: "changes" });
    });

    test("the role made by `print-sql read-only-role | psql` serves the API and /readyz, and cannot write", async () => {
      const KEY = "read-only-role-key-5a0c";
      const role = `pce_ro_${process.pid}`;
      const db = await testDatabase();
      // As the README says: `migrate` (which ends with a refresh), then the role; the
      // executable prints its script (it travels without sql/).
      expect(run(["refresh"], { DATABASE_URL: db.url }).code).toBe(0);
      const script = run(["print-sql", "read-only-role"]);
      expect([script.code, script.stdout]).toEqual([0, readFileSync(READ_ONLY_ROLE_SQL, "utf8")]);
      const psql = Bun.spawnSync(["psql", "-X", "-q", db.url, "-v", `role=${role}`, "-v", "password=ro-secret-1"], {
        stdin: Buffer.from(script.stdout),
        stdout: "pipe",
        stderr: "pipe",
      });
      expect([psql.exitCode, psql.stderr.toString()]).toEqual([0, ""]);
      const url = new URL(db.url);
      url.username = role;
      url.password = "ro-secret-1";
      const asRole = (await import("postgres")).default(url.toString(), { max: 1, onnotice: () => {} });
      const server = await startBinary(bin.path, { DATABASE_URL: url.toString(), PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      try {
        const res = await get(server, JAN, KEY);
        expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
        const ready = await get(server, "/readyz");
        expect([ready.status, await ready.text()]).toEqual([200, '{"detail":"READY"}']);
        const code = (p: Promise<unknown>) => p.then(() => "ok", (e: { code?: string }) => e.code);
        expect(await code(asRole`insert into products (product_id) values (-1)`)).toBe("25006"); // read-only transaction
        expect(await code(asRole.begin("read write", (tx) => tx`insert into products (product_id) values (-1)`))).toBe("42501"); // no privilege
        expect(await code(asRole`create table pce_ro_probe (x int)`)).toBe("25006");
        expect(everything(server)).not.toContain("ro-secret-1"); // the URL is logged without its password
      } finally {
        expect(await server.stop()).toBe(0);
        await asRole.end();
        await db.admin.unsafe(`drop owned by ${role}`);
        await db.admin.unsafe(`drop role ${role}`);
      }
    });

    test("/readyz answers 503 MIGRATIONS_PENDING on an empty database, and once `migrate` has run, with no key configured, 503 EXTERNAL_API_NOT_CONFIGURED", async () => {
      const name = `pce_ops_empty_${process.pid}`;
      const serverSql = (await import("postgres")).default(SERVER_URL, { max: 1, onnotice: () => {} });
      await serverSql.unsafe(`drop database if exists ${name}`);
      await serverSql.unsafe(`create database ${name}`);
      const url = new URL(SERVER_URL);
      url.pathname = "/" + name;
      const server = await startBinary(bin.path, { DATABASE_URL: url.toString() }, [], bin.dir);
      try {
        const before = await get(server, "/readyz");
        // Nothing to read: no rollup, and no daily rows either.
        expect([before.status, await before.json()]).toEqual([
          503,
          {
            detail: "MIGRATIONS_PENDING",
            cause: 'relation "product_daily_costs" does not exist',
            fix: "the service reads the ETL's tables products and product_daily_costs: check that DATABASE_URL names the ETL's database; for a new database, or a rollup table dropped by hand, run `product-cost-export migrate` with a DATABASE_URL of the tables' owner",
          },
        ]);
        expect(run(["migrate"], { DATABASE_URL: url.toString() }).code).toBe(0);
        const after = await get(server, "/readyz");
        // No key configured in this test: not ready, and /readyz says why and what to do.
        expect([after.status, await after.text()]).toEqual([
          503,
          '{"detail":"EXTERNAL_API_NOT_CONFIGURED","cause":"no API key configured: every API request answers 503","fix":"add a key to the key file (product-cost-export generate-key) and reload, or set PRODUCT_COST_API_KEYS (README: API keys)"}',
        ]);
        // A poll's line at info: the start-up warning (and each reload's) says it once.
        expect(await server.waitForLine((l) => l.msg === "request" && l.path === "/readyz" && l.error === "EXTERNAL_API_NOT_CONFIGURED")).toMatchObject({ status: 503, level: "info" });
        expect(server.lines.find((l) => String(l.msg).startsWith("no API key configured"))).toMatchObject({ level: "warn" });
      } finally {
        expect(await server.stop()).toBe(0);
        await serverSql.unsafe(`drop database if exists ${name} with (force)`);
        await serverSql.end();
      }
    });
  });

  describe("which database URL wins (README: The database URL)", () => {
    // The credential names a database nothing serves, so the winner shows in the listening
    // line and in whether requests are answered.
    const FROM_CREDENTIAL = "postgres://credential-user:credential-secret@127.0.0.1:1/from-credential";
    const KEY = "url-precedence-key-5a7e";
    let credentials: string;
    beforeAll(() => {
      credentials = join(work, "url-credentials");
      mkdirSync(credentials, { recursive: true });
      writeFileSync(join(credentials, "database-url"), `${FROM_CREDENTIAL}\n`);
    });

    test.each([
      ["DATABASE_URL (the environment, as the env file sets it)", "env"],
      ["--database-url", "flag"],
    ] as const)("%s wins over the database-url credential", async (_, how) => {
      const url = database.DATABASE_URL!;
      const env = { CREDENTIALS_DIRECTORY: credentials, PRODUCT_COST_API_KEYS: KEY, ...(how === "env" ? { DATABASE_URL: url } : {}) };
      const server = await startBinary(bin.path, env, how === "flag" ? ["--database-url", url] : [], bin.dir);
      try {
        expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ database: `PostgreSQL at ${maskDatabaseUrl(url)}` });
        const res = await get(server, JAN, KEY);
        expect([res.status, await res.text()]).toEqual([200, JANUARY_NORMAL]);
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });

    test("the credential alone is read (so the two above had a credential to beat)", async () => {
      const server = await startBinary(bin.path, { CREDENTIALS_DIRECTORY: credentials, PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
      try {
        expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ database: `PostgreSQL at ${maskDatabaseUrl(FROM_CREDENTIAL)}` });
        expect(everything(server)).not.toContain("credential-secret");
      } finally {
        expect(await server.stop()).toBe(0);
      }
    });
  });
});
