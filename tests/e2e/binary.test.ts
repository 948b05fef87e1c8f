// The compiled executable as a black box: copied alone to an empty directory (no
// node_modules, no sql/, no Bun), started, called over real HTTP, stopped with a signal.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtBinary, cleanEnv, fixtureDatabaseEnv, isolatedBinary, startBinary, type RunningBinary } from "../support/binary.ts";
import { JANUARY_NORMAL } from "../http/fixture.ts";

const KEY = "e2e-key-5f1c9a";
let bin: { dir: string; path: string };
/** DATABASE_URL of the run's PostgreSQL, or DATA_DIR of an embedded copy of the fixture. */
let database: Record<string, string>;

beforeAll(async () => {
  bin = isolatedBinary();
  database = await fixtureDatabaseEnv(bin.path);
});

function run(args: string[], env: Record<string, string> = {}, stdin?: string) {
  const r = Bun.spawnSync([bin.path, ...args], { env: cleanEnv(env), stdin: stdin === undefined ? "ignore" : Buffer.from(stdin), cwd: bin.dir });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

describe("the executable's commands", () => {
  test("--version, -v and version print the version and the commit", () => {
    for (const args of [["--version"], ["-v"], ["version"]]) {
      const r = run(args);
      expect([args, r.code, r.stderr]).toEqual([args, 0, ""]);
      expect(r.stdout).toMatch(/^product-cost-export \d+\.\d+\.\d+ \(commit ([0-9a-f]{7,}|unknown)(-dirty)?\)\n$/);
    }
  });

  test("--help, -h and help show the commands; each command's --help shows its own flags and settings only", () => {
    const overview = run(["--help"]);
    expect([overview.code, overview.stderr]).toEqual([0, ""]);
    for (const name of ["serve", "migrate", "refresh", "load-csv", "generate-key", "hash-key", "systemd-unit", "print-sql", "man-page", "help", "version"]) {
      expect(overview.stdout).toContain(`\n  ${name} `);
    }
    expect(run(["-h"]).stdout).toBe(overview.stdout);
    expect(run(["help"]).stdout).toBe(overview.stdout);

    const serve = run(["serve", "--help"]).stdout;
    for (const name of ["DATABASE_URL", "PRODUCT_COST_API_KEYS", "PRODUCT_COST_API_KEYS_FILE", "HOST", "PORT", "TLS_CERT_FILE", "--port", "--host", "--database-url"]) {
      expect(serve).toContain(name);
    }
    const migrate = run(["migrate", "--help"]);
    expect(run(["help", "migrate"]).stdout).toBe(migrate.stdout);
    expect(run(["migrate", "-h"]).stdout).toBe(migrate.stdout);
    expect(run(["generate-key", "-h"]).stdout).toBe(run(["generate-key", "--help"]).stdout);
    expect(migrate.code).toBe(0);
    expect(migrate.stdout).toStartWith("Usage: product-cost-export migrate [flags]\n");
    expect(migrate.stdout).toContain("--dry-run");
    expect(migrate.stdout).toContain("DATABASE_URL");
    for (const name of ["--port", "PRODUCT_COST_API_KEYS", "--metrics-enabled", "--rebuild"]) expect(migrate.stdout).not.toContain(name);
  });

  test.each([
    [["--host", "a b"], {}, 'product-cost-export: --host must be an IP address or a host name of this machine (0.0.0.0: every interface; 127.0.0.1: this machine only), got "a b"\n'],
    [["migrate", "--port", "80", "--metrics-enabled", "false"], { DATABASE_URL: "postgres://x/db" }, "product-cost-export: --port is a setting of serve, not of migrate (see migrate --help); --metrics-enabled is a setting of serve, not of migrate (see migrate --help)\n"],
    [["refresh", "--dry-run"], { DATABASE_URL: "postgres://x/db" }, "product-cost-export: unknown flag --dry-run (see refresh --help)\n"],
    [["hash-key", "--log-level", "debug", "k"], {}, "product-cost-export: --log-level is a setting of serve, migrate, refresh, load-csv, not of hash-key (see hash-key --help)\n"],
    [["help", "frobnicate"], {}, "product-cost-export: unknown command \"frobnicate\" (see --help)\n"],
    [["print-sql", "everything"], {}, 'product-cost-export: print-sql prints one of: read-only-role, daily-index (not "everything")\n'],
    [["print-sql"], {}, "product-cost-export: print-sql needs <read-only-role|daily-index> (see print-sql --help)\n"],
    [["version", "--verbose"], {}, "product-cost-export: unknown flag --verbose (see version --help)\n"],
    [["generate-key", "--label", "two\nlines"], {}, 'product-cost-export: generate-key: --label must be 1 to 64 printable characters on one line, got "two\\nlines"\n'],
    // The key file's loader keeps 64 characters of a label: a longer one is refused, not cut.
    [["generate-key", "--label", "x".repeat(65)], {}, `product-cost-export: generate-key: --label must be 1 to 64 printable characters on one line, got "${"x".repeat(65)}"\n`],
    [["hash-key", "a key with spaces"], {}, "product-cost-export: hash-key: an API key is visible ASCII characters only (no spaces, no other alphabets)\n"],
  ] as const)("usage error %p: one line, exit 2", (args, env, message) => {
    const r = run([...args], env as Record<string, string>);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: message, stdout: "" });
  });

  test("a --host that is no address of this machine is a configuration error (exit 2), found when listening", () => {
    const r = run(["--host", "nosuchhost.invalid", "--port", "0", "--demo-data"]);
    // The errno in parentheses is the resolver's, and depends on the machine's nsswitch.conf
    // (ENOTSUP, or ENXIO with systemd-container's mymachines): what matters is exit 2 and one
    // line naming HOST.
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^product-cost-export: cannot listen on nosuchhost\.invalid:0 \([A-Z0-9_]+\): HOST must be an address or name of this machine \(0\.0\.0\.0: every interface\)\n$/,
    );
  });

  test("generate-key prints a new 256-bit URL-safe key and its key-file line with the label; hash-key agrees", () => {
    const a = run(["generate-key", "--label", "BI laptop (Ann)"]);
    const b = run(["generate-key"]);
    expect([a.code, a.stderr, b.code]).toEqual([0, "", 0]);
    const [key, line, rest] = a.stdout.split("\n");
    expect(key).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(rest).toBe("");
    expect(line).toBe(`sha256:${createHash("sha256").update(key!).digest("hex")}  # BI laptop (Ann)`);
    expect(b.stdout.split("\n")[0]).not.toBe(key);
    expect(b.stdout.split("\n")[1]).toMatch(/^sha256:[0-9a-f]{64}$/);
    // The same digest from hash-key, given the key as an argument or on stdin.
    const digest = line!.split(" ")[0] + "\n";
    expect(run(["hash-key", key!])).toEqual({ code: 0, stdout: digest, stderr: "" });
    expect(run(["hash-key"], {}, `${key}\n`)).toEqual({ code: 0, stdout: digest, stderr: "" });
  });

  test("hash-key on a terminal asks for the key without echoing it", () => {
    // A pseudo-terminal from Python's pty module: what the person would see is read back.
    const script = [
      "import os, pty, sys, time",
      "pid, fd = pty.fork()",
      `if pid == 0: os.execv(sys.argv[1], [sys.argv[1], "hash-key"])`,
      // Type only once the prompt is up (raw mode is on by then): typing earlier would be echoed.
      "out = b''",
      "while b'not shown' not in out: out += os.read(fd, 1024)",
      "os.write(fd, b'typed-secret-0123\\r')",
      "while True:",
      "    try: chunk = os.read(fd, 1024)",
      "    except OSError: break",
      "    if not chunk: break",
      "    out += chunk",
      "os.waitpid(pid, 0); sys.stdout.write(out.decode())",
    ].join("\n");
    const r = Bun.spawnSync(["python3", "-c", script, bin.path], { env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
    const screen = r.stdout.toString();
    expect([r.exitCode, r.stderr.toString()]).toEqual([0, ""]);
    expect(screen).toContain("API key (not shown): ");
    expect(screen).not.toContain("typed-secret-0123");
    expect(screen).toContain(`sha256:${createHash("sha256").update("typed-secret-0123").digest("hex")}`);
  });

  test.each([
    [["--port", "abc"], {}, "product-cost-export: --port must be a whole number, got \"abc\"\n"],
    [["--no-such-flag"], {}, "product-cost-export: unknown flag --no-such-flag (see --help)\n"],
    [[], { DATABASE_URL: "mysql://x" }, "product-cost-export: DATABASE_URL: must start with postgres:// or postgresql:// (expected postgres://user:password@host:5432/database)\n"],
    [[], { DATABASE_URL: "postgres://x", TLS_CERT_FILE: "/tmp/c.pem" }, "product-cost-export: TLS_CERT_FILE and TLS_KEY_FILE must be set together\n"],
    [[], { DATABASE_URL: "postgres://x", PRODUCT_COST_API_KEYS_FILE: "/nonexistent/keys" }, "product-cost-export: cannot read API key file /nonexistent/keys: ENOENT\n"],
    [["frobnicate"], {}, "product-cost-export: unknown command \"frobnicate\" (see --help)\n"],
  ] as const)("bad configuration %p stops with one line and exit 2", (args, env, message) => {
    const r = run([...args], env as Record<string, string>);
    expect({ code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ code: 2, stderr: message, stdout: "" });
  });

  test("an sslrootcert or sslcert the service's own user may not read: exit 2 saying where to put it, not the URL's shape (issue 46)", () => {
    // Under systemd the service runs as a dynamic user: a CA file root alone may read is refused.
    const dir = mkdtempSync(join(tmpdir(), "pce-ca-")); // mode 0700, root's
    const ca = join(dir, "db-ca.pem");
    writeFileSync(ca, "not read");
    try {
      const r = Bun.spawnSync(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", builtBinary(), "serve"], {
        env: cleanEnv({ DATABASE_URL: `postgres://db/x?sslmode=verify-full&sslrootcert=${ca}` }),
        cwd: "/",
        stdout: "pipe",
        stderr: "pipe",
      });
      expect([r.exitCode, r.stderr.toString()]).toEqual([
        2,
        `product-cost-export: DATABASE_URL: sslrootcert ${ca} cannot be read by the service's user: put it where every user may read it (/etc/ssl/certs): EACCES\n`,
      ]);
      // A client certificate and key are private: not /etc/ssl/certs, but copied to the service.
      const client = Bun.spawnSync(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", builtBinary(), "serve"], {
        env: cleanEnv({ DATABASE_URL: `postgres://db/x?sslmode=require&sslcert=${ca}&sslkey=${ca}` }),
        cwd: "/",
        stdout: "pipe",
        stderr: "pipe",
      });
      expect([client.exitCode, client.stderr.toString()]).toEqual([
        2,
        `product-cost-export: DATABASE_URL: sslcert ${ca} cannot be read by the service's user: put it in /etc/product-cost-export/db-client-cert.pem and name /run/product-cost-export/db-client-cert here: EACCES\n`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("hash-key prints the sha256 digest of the key on stdin", () => {
    const r = run(["hash-key"], {}, "secret\n");
    expect(r).toEqual({ code: 0, stdout: "sha256:2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b\n", stderr: "" });
  });

  test("migrate is idempotent on an already migrated database", () => {
    const first = run(["migrate"], database);
    expect(first.code).toBe(0);
    const lines = first.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(lines.find((l) => l.msg === "migrations applied")).toMatchObject({ level: "info", applied: [] });
    expect(lines.find((l) => l.msg === "refreshed")).toMatchObject({ level: "info" });
    const dry = run(["migrate", "--dry-run"], database);
    expect([dry.code, dry.stderr]).toEqual([0, ""]);
    expect(JSON.parse(dry.stdout)).toMatchObject({ level: "info", msg: "nothing to migrate", pending: 0 });
  });
});

describe("serving over HTTP", () => {
  let server: RunningBinary;
  beforeAll(async () => {
    server = await startBinary(bin.path, { ...database, PRODUCT_COST_API_KEYS: `other,${KEY}` }, [], bin.dir);
  });
  afterAll(async () => {
    await server.stop();
  });

  test("200 with the exact rows, content type and length", async () => {
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(await res.text()).toBe(JANUARY_NORMAL);
  });

  test("422 bytes and Content-Length as FastAPI sends them", async () => {
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=x&month_to=2024-01-01`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect([res.status, res.headers.get("content-length"), res.headers.get("content-type")]).toEqual([422, "197", "application/json"]);
    expect(await res.text()).toBe(
      '{"detail":[{"type":"date_from_datetime_parsing","loc":["query","month_from"],"msg":"Input should be a valid date or datetime, input is too short","input":"x","ctx":{"error":"input is too short"}}]}',
    );
  });

  test("401 is 28 bytes", async () => {
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31`);
    expect([res.status, res.headers.get("content-length"), await res.text()]).toEqual([401, "28", '{"detail":"INVALID_API_KEY"}']);
  });

  test("a request line of 60 KiB is answered normally", async () => {
    const res = await fetch(`${server.url}/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31&pad=${"x".repeat(60 * 1024)}`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(JANUARY_NORMAL);
  });

  test("healthz answers without a key", async () => {
    const res = await fetch(`${server.url}/healthz`);
    const version = run(["--version"]).stdout; // "product-cost-export 0.1.0 (commit abc)"
    expect([res.status, await res.text()]).toEqual([200, JSON.stringify({ detail: "OK", version: version.split(" ")[1], commit: version.split("commit ")[1]!.replace(")\n", "") })]);
  });

  test("readyz answers READY when the database is migrated", async () => {
    const res = await fetch(`${server.url}/readyz`);
    expect([res.status, await res.text()]).toEqual([200, '{"detail":"READY"}']);
  });

  test("each request is logged as one JSON line with the key's fingerprint, never the key", async () => {
    await (await fetch(`${server.url}/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31`, {
      headers: { authorization: `Bearer ${KEY}`, "x-request-id": "e2e-log-1" },
    })).text();
    const line = await server.waitForLine((l) => l.request_id === "e2e-log-1");
    expect(line).toMatchObject({ level: "info", msg: "request", status: 200, rows: 6, path: "/external/v1/product-costs" });
    expect(JSON.stringify(server.lines)).not.toContain(KEY);
  });

  test("SIGTERM stops it cleanly with exit code 0", async () => {
    // A second server (on the embedded demo data: a data dir admits one process at a time).
    const other = await startBinary(bin.path, { PRODUCT_COST_API_KEYS: KEY }, [], bin.dir);
    expect(await other.stop("SIGTERM")).toBe(0);
    expect(other.lines.at(-1)).toMatchObject({ msg: "stopped" });
  });
});
