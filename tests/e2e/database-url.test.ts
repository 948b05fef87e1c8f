// DATABASE_URL as operators write it, against a throwaway cluster that wants a password
// over TCP (scram-sha-256) and offers TLS with a certificate made here: the password in
// the user info or as ?password=, sslmode from disable to verify-full, several hosts with
// the first one down, options and application_name; and the executable, which never shows
// the password, at any log level.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPool, type Sql } from "../../src/database/client.ts";
import { cleanEnv, isolatedBinary, startBinary } from "../support/binary.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { unusedPort } from "../support/ports.ts";

const PASSWORD = "s3cret-Pa$$word";
const work = mkdtempSync(join(tmpdir(), "pce-dburl-"));

/** A self-signed certificate for 127.0.0.1 and localhost, made with openssl. */
async function certificate(name: string): Promise<{ cert: string; key: string; certFile: string }> {
  const [certFile, keyFile] = [join(work, `${name}.crt`), join(work, `${name}.key`)];
  const p = Bun.spawn(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", keyFile, "-out", certFile, "-days", "2", "-subj", `/CN=${name}`, "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"], { stdout: "pipe", stderr: "pipe" });
  if ((await p.exited) !== 0) throw new Error(`openssl failed: ${await new Response(p.stderr).text()}`);
  return { cert: await Bun.file(certFile).text(), key: await Bun.file(keyFile).text(), certFile };
}

describeWithPostgres("DATABASE_URL against a server that wants a password and offers TLS", () => {
  let cluster: Cluster;
  let server: { certFile: string };
  let other: { certFile: string };
  const pools: Sql[] = [];
  const encodedPassword = encodeURIComponent(PASSWORD);

  beforeAll(async () => {
    const tls = await certificate("pce-test-server");
    server = tls;
    other = await certificate("someone-else");
    // A client certificate for the role `certified`, signed by a CA the server trusts; that
    // role logs in by its certificate alone (pg_hba `cert`), never by a password.
    const openssl = (...args: string[]) => {
      const r = Bun.spawnSync(["openssl", ...args], { cwd: work, stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
    };
    openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2", "-subj", "/CN=clients CA", "-keyout", "client-ca.key", "-out", "client-ca.crt");
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj", "/CN=certified", "-keyout", "client.key", "-out", "client.csr");
    openssl("x509", "-req", "-in", "client.csr", "-CA", "client-ca.crt", "-CAkey", "client-ca.key", "-CAcreateserial", "-days", "2", "-out", "client.crt");
    cluster = await createCluster({ password: PASSWORD, tls: { ...tls, clientCa: await Bun.file(join(work, "client-ca.crt")).text() }, hba: ["hostssl all certified 127.0.0.1/32 cert"] });
    cluster.start();
  }, 60_000);
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.end({ timeout: 2 })));
    cluster?.destroy();
    rmSync(work, { recursive: true, force: true });
  });

  /** What a session opened from `url` sees of itself. */
  async function session(url: string): Promise<{ ssl: boolean; application_name: string; search_path: string }> {
    const sql = createPool({ url, max: 1, connectTimeoutMs: 3000, statementTimeoutMs: 5000, readOnly: false, applicationName: "pce-dburl-test" });
    pools.push(sql);
    const [row] = await sql<{ ssl: boolean; application_name: string; search_path: string }[]>`
      select s.ssl, a.application_name, current_setting('search_path') as search_path
      from pg_stat_ssl s join pg_stat_activity a using (pid) where s.pid = pg_backend_pid()`;
    return row!;
  }

  const base = () => `127.0.0.1:${cluster.port}/postgres`;

  test("the password in the user info or as ?password= logs in; a wrong one is refused with 28P01", async () => {
    expect(await session(`postgres://postgres:${encodedPassword}@${base()}`)).toMatchObject({ application_name: "pce-dburl-test" });
    expect(await session(`postgres://postgres@${base()}?password=${encodedPassword}`)).toMatchObject({ application_name: "pce-dburl-test" });
    await expect(session(`postgres://postgres:wrong@${base()}`)).rejects.toMatchObject({ code: "28P01" });
  });

  test("sslmode: prefer (the default) and require encrypt, disable does not", async () => {
    const url = (mode?: string) => `postgres://postgres:${encodedPassword}@${base()}${mode ? `?sslmode=${mode}` : ""}`;
    expect((await session(url())).ssl).toBe(true);
    expect((await session(url("require"))).ssl).toBe(true);
    expect((await session(url("disable"))).ssl).toBe(false);
  });

  test("sslcert and sslkey: a client certificate the server asks for logs in; without it, or with another's key, it is refused", async () => {
    const admin = createPool({ url: `postgres://postgres:${encodedPassword}@${base()}`, max: 1, connectTimeoutMs: 3000, statementTimeoutMs: 5000, readOnly: false, applicationName: "pce-dburl-admin" });
    pools.push(admin);
    await admin`create role certified login`;
    const url = (client: string) =>
      `postgres://certified@localhost:${cluster.port}/postgres?sslmode=verify-full&sslrootcert=${encodeURIComponent(server.certFile)}${client}`;
    const own = `&sslcert=${encodeURIComponent(join(work, "client.crt"))}&sslkey=${encodeURIComponent(join(work, "client.key"))}`;
    expect(await session(url(own))).toMatchObject({ ssl: true, application_name: "pce-dburl-test" });
    // No certificate: pg_hba's `cert` refuses the connection (28000).
    await expect(session(url(""))).rejects.toMatchObject({ code: "28000" });
    // A certificate the server's CA did not sign.
    const stranger = `&sslcert=${encodeURIComponent(other.certFile)}&sslkey=${encodeURIComponent(other.certFile.replace(/\.crt$/, ".key"))}`;
    await expect(session(url(stranger))).rejects.toThrow();
  });

  test("verify-full and verify-ca accept the server's certificate from sslrootcert, and refuse another's", async () => {
    const url = (mode: string, root: string, host = "localhost") =>
      `postgres://postgres:${encodedPassword}@${host}:${cluster.port}/postgres?sslmode=${mode}&sslrootcert=${encodeURIComponent(root)}`;
    expect((await session(url("verify-full", server.certFile))).ssl).toBe(true);
    expect((await session(url("verify-ca", server.certFile))).ssl).toBe(true);
    await expect(session(url("verify-full", other.certFile))).rejects.toThrow();
    await expect(session(url("verify-ca", other.certFile))).rejects.toThrow();
  });

  test("a file that is no PEM certificate in sslrootcert, or sslkey not sslcert's key: exit 2 at start with one line, not a crash at the first connection", () => {
    // Both were read only when the first session started TLS, inside postgres.js: an unhandled
    // rejection that ended the process (exit 1, restarted by systemd, to end again).
    const notPem = join(work, "not-a-certificate.pem");
    writeFileSync(notPem, "garbage\n");
    const bin = isolatedBinary();
    const serve = (query: string) => {
      const r = Bun.spawnSync([bin.path, "serve"], { env: cleanEnv({ DATABASE_URL: `postgres://certified@localhost:${cluster.port}/postgres?${query}`, PRODUCT_COST_API_KEYS: "k-0123456789abcdef" }), stdout: "pipe", stderr: "pipe" });
      return [r.exitCode, r.stderr.toString(), r.stdout.toString()];
    };
    expect(serve(`sslmode=verify-full&sslrootcert=${notPem}`)).toEqual([2, `product-cost-export: DATABASE_URL: sslrootcert ${notPem} (PEM certificates) cannot be used for TLS: Invalid CA\n`, ""]);
    const [cert, key] = [join(work, "client.crt"), other.certFile.replace(/\.crt$/, ".key")];
    expect(serve(`sslmode=require&sslcert=${cert}&sslkey=${key}`)).toEqual([
      2,
      `product-cost-export: DATABASE_URL: sslcert ${cert} and sslkey ${key} (a PEM certificate and its private key) cannot be used for TLS: error:0b000074:X.509 certificate routines:OPENSSL_internal:KEY_VALUES_MISMATCH\n`,
      "",
    ]);
  });

  test("several hosts: the first one down, the next one serves; target_session_attrs=primary picks the primary", async () => {
    const url = `postgres://postgres:${encodedPassword}@127.0.0.1:${unusedPort()},127.0.0.1:${cluster.port}/postgres?target_session_attrs=primary`;
    expect((await session(url)).ssl).toBe(true);
  });

  test("options and application_name reach the session", async () => {
    const url = `postgres://postgres:${encodedPassword}@${base()}?options=${encodeURIComponent("-c search_path=pg_catalog")}&application_name=etl-view`;
    expect(await session(url)).toMatchObject({ search_path: "pg_catalog", application_name: "etl-view" });
  });

  test("the Unix socket: ?host=<directory>, trusted there", async () => {
    const url = `postgres://postgres@/postgres?host=${encodeURIComponent(cluster.socketDirectory)}&port=${cluster.port}`;
    expect((await session(url)).ssl).toBe(false);
  });

  test("the executable serves with the password in ?password= and never shows it, at debug level too", async () => {
    const bin = isolatedBinary();
    const keys = join(work, "keys");
    writeFileSync(keys, "dburl-test-key-0123456789\n");
    const url = `postgres://postgres@${base()}?password=${encodedPassword}&sslmode=require`;
    // A database without the tables: /readyz names that problem, which proves it logged in.
    const running = await startBinary(bin.path, { DATABASE_URL: url, PRODUCT_COST_API_KEYS_FILE: keys, LOG_LEVEL: "debug" }, [], bin.dir);
    try {
      const ready = await fetch(`${running.url}/readyz`);
      expect(await ready.json()).toMatchObject({ detail: "MIGRATIONS_PENDING" });
      const started = running.lines.find((l) => String(l.database ?? "").startsWith("PostgreSQL at"));
      expect(started?.database).toBe(`PostgreSQL at postgres://postgres@${base()}?password=***&sslmode=require`);
    } finally {
      await running.stop();
    }
    const everything = JSON.stringify(running.lines) + running.stderr();
    expect(everything).not.toContain(PASSWORD);
    expect(everything).not.toContain(encodedPassword);
  });
});
