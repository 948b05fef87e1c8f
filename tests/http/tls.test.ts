// HTTPS as a security review expects (issue 31, item 9), checked with `openssl s_client`
// against the server `serve` runs (listen()), with certificates made here by openssl:
// Mozilla's "intermediate" profile by default (TLS 1.2 with ECDHE and AEAD suites only, TLS
// 1.3; no RSA key exchange, no CBC), TLS_CIPHERS to change the TLS 1.2 list, and
// Strict-Transport-Security on every HTTPS answer (HSTS_MAX_AGE, 0: none).
// And one pin of Bun 1.4.5: server.reload({ tls }) keeps serving the old certificate, so a
// renewed one needs a restart (docs/architecture.md, Known limits).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULTS } from "../../src/settings/config.ts";
import { certificateNotAfter, listen, type ListenOptions } from "../../src/edge/server.ts";
import { noDatabase, testApp } from "../support/app.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const dir = mkdtempSync(join(tmpdir(), "pce-tls-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A self-signed certificate and its key, made by openssl: `rsa` or `ec` (P-256). */
function certificate(name: string, kind: "rsa" | "ec"): { tlsCertFile: string; tlsKeyFile: string } {
  const tlsCertFile = join(dir, `${name}.crt`);
  const tlsKeyFile = join(dir, `${name}.key`);
  const key = kind === "rsa" ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"];
  const made = Bun.spawnSync(["openssl", "req", "-x509", ...key, "-nodes", "-days", "2", "-subj", `/CN=${name}`, "-keyout", tlsKeyFile, "-out", tlsCertFile]);
  if (made.exitCode !== 0) throw new Error(`openssl req failed: ${made.stderr.toString()}`);
  return { tlsCertFile, tlsKeyFile };
}

interface Handshake {
  protocol: string;
  cipher: string;
  peer: string;
}

/** What `openssl s_client` agrees with the server at `port` given `args` (-tls1_2 -cipher …); null: refused. */
async function handshake(port: number, ...args: string[]): Promise<Handshake | null> {
  const run = Bun.spawn(["openssl", "s_client", "-connect", `127.0.0.1:${port}`, "-brief", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  const [out, err] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  const text = out + err;
  const field = (name: string) => new RegExp(`^${name}: (.+)$`, "m").exec(text)?.[1]?.trim();
  if (!text.includes("CONNECTION ESTABLISHED")) return null;
  return { protocol: field("Protocol version")!, cipher: field("Ciphersuite")!, peer: field("Peer certificate")! };
}

// Old suites an OpenSSL 3 client offers only at security level 0.
const LEGACY = "@SECLEVEL=0";

function serveTls(options: Partial<ListenOptions> & Pick<ListenOptions, "tlsCertFile" | "tlsKeyFile">) {
  const app = testApp(noDatabase());
  return listen({ host: "127.0.0.1", port: 0, tlsCiphers: DEFAULTS.tlsCiphers, hstsMaxAge: DEFAULTS.hstsMaxAge, ...options }, app.handle, memoryLogger(), app.rawRoutes);
}

describe("TLS suites, by openssl s_client", () => {
  const rsa = certificate("rsa-one", "rsa");
  const ec = certificate("ec-one", "ec");
  let rsaServer: ReturnType<typeof listen>;
  let ecServer: ReturnType<typeof listen>;
  beforeAll(() => {
    rsaServer = serveTls(rsa);
    ecServer = serveTls(ec);
  });
  afterAll(() => {
    rsaServer.stop(true);
    ecServer.stop(true);
  });

  test("TLS 1.2 refuses suites without forward secrecy (RSA key exchange) and CBC suites", async () => {
    const refused = ["AES128-SHA", "AES256-SHA", "AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-SHA256", "ECDHE-RSA-AES128-SHA", "ECDHE-RSA-AES256-SHA", "ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384"];
    const agreed: Record<string, Handshake | null> = {};
    for (const suite of refused) agreed[suite] = await handshake(rsaServer.port!, "-tls1_2", "-cipher", `${suite}:${LEGACY}`);
    for (const suite of ["ECDHE-ECDSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-ECDSA-AES128-SHA256"]) agreed[suite] = await handshake(ecServer.port!, "-tls1_2", "-cipher", `${suite}:${LEGACY}`);
    expect(agreed).toEqual(Object.fromEntries(Object.keys(agreed).map((s) => [s, null])));
  });

  test("TLS 1.2 agrees each ECDHE AEAD suite of Mozilla's intermediate profile", async () => {
    const agreed: Record<string, string | undefined> = {};
    for (const suite of ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-AES256-GCM-SHA384", "ECDHE-RSA-CHACHA20-POLY1305"]) {
      agreed[suite] = (await handshake(rsaServer.port!, "-tls1_2", "-cipher", suite))?.cipher;
    }
    for (const suite of ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-ECDSA-CHACHA20-POLY1305"]) {
      agreed[suite] = (await handshake(ecServer.port!, "-tls1_2", "-cipher", suite))?.cipher;
    }
    expect(agreed).toEqual(Object.fromEntries(Object.keys(agreed).map((s) => [s, s])));
  });

  test("TLS 1.3 is served with each of its suites; TLS 1.1 and 1.0 are refused", async () => {
    for (const suite of ["TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256"]) {
      expect(await handshake(rsaServer.port!, "-tls1_3", "-ciphersuites", suite)).toEqual({ protocol: "TLSv1.3", cipher: suite, peer: "CN = rsa-one" });
    }
    expect(await handshake(rsaServer.port!, "-tls1_1", "-cipher", `DEFAULT:${LEGACY}`)).toBeNull();
    expect(await handshake(rsaServer.port!, "-tls1", "-cipher", `DEFAULT:${LEGACY}`)).toBeNull();
  });

  test("TLS_CIPHERS replaces the TLS 1.2 list", async () => {
    const server = serveTls({ ...rsa, tlsCiphers: "ECDHE-RSA-AES256-GCM-SHA384" });
    try {
      expect((await handshake(server.port!, "-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"))?.cipher).toBe("ECDHE-RSA-AES256-GCM-SHA384");
      expect(await handshake(server.port!, "-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256")).toBeNull();
    } finally {
      server.stop(true);
    }
  });
});

test("a TLS_CIPHERS that names no known suite stops the start with a ConfigError naming the setting", () => {
  const rsa = certificate("rsa-bad-list", "rsa");
  expect(() => serveTls({ ...rsa, tlsCiphers: "NOPE" })).toThrow('TLS_CIPHERS names no cipher suite this build knows: "NOPE"');
});

describe("Strict-Transport-Security", () => {
  const rsa = certificate("rsa-hsts", "rsa");
  const get = async (url: string) => {
    const res = await fetch(url, { tls: { rejectUnauthorized: false } });
    await res.arrayBuffer();
    return { status: res.status, hsts: res.headers.get("strict-transport-security") };
  };

  test("every HTTPS answer says max-age=31536000 (a year) by default, a 404 and /healthz alike", async () => {
    const server = serveTls(rsa);
    try {
      expect(await get(`https://127.0.0.1:${server.port}/healthz`)).toEqual({ status: 200, hsts: "max-age=31536000" });
      expect(await get(`https://127.0.0.1:${server.port}/nothing`)).toEqual({ status: 404, hsts: "max-age=31536000" });
    } finally {
      server.stop(true);
    }
  });

  test("HSTS_MAX_AGE sets the age; 0 sends none; plain HTTP never sends it", async () => {
    const week = serveTls({ ...rsa, hstsMaxAge: 604800 });
    const off = serveTls({ ...rsa, hstsMaxAge: 0 });
    const app = testApp(noDatabase());
    const plain = listen({ host: "127.0.0.1", port: 0, hstsMaxAge: DEFAULTS.hstsMaxAge }, app.handle, memoryLogger(), app.rawRoutes);
    try {
      expect(await get(`https://127.0.0.1:${week.port}/healthz`)).toEqual({ status: 200, hsts: "max-age=604800" });
      expect(await get(`https://127.0.0.1:${off.port}/healthz`)).toEqual({ status: 200, hsts: null });
      expect(await get(`http://127.0.0.1:${plain.port}/healthz`)).toEqual({ status: 200, hsts: null });
    } finally {
      week.stop(true);
      off.stop(true);
      plain.stop(true);
    }
  });
});

test("Bun 1.4.5 pin: server.reload({ tls }) keeps serving the first certificate (a renewed one needs a restart)", async () => {
  const one = certificate("reload-one", "rsa");
  const two = certificate("reload-two", "rsa");
  const read = (c: { tlsCertFile: string; tlsKeyFile: string }) => ({ cert: Bun.file(c.tlsCertFile), key: Bun.file(c.tlsKeyFile) });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, tls: read(one), fetch: () => new Response("ok") });
  try {
    server.reload({ fetch: () => new Response("ok"), tls: read(two) } as Parameters<typeof server.reload>[0]);
    // When this fails, Bun swaps certificates on reload: SIGHUP can take a renewed one (src/cli/reload.ts).
    expect((await handshake(server.port!, "-tls1_3"))?.peer).toBe("CN = reload-one");
  } finally {
    server.stop(true);
  }
});

test("the certificate's expiry (the /metrics gauge, issue 46): the chain's earliest notAfter, as openssl reads it", () => {
  const enddate = (file: string) => Date.parse(Bun.spawnSync(["openssl", "x509", "-noout", "-enddate", "-in", file]).stdout.toString().trim().replace("notAfter=", "")) / 1000;
  const leaf = certificate("expiry-leaf", "ec").tlsCertFile;
  const longer = join(dir, "expiry-longer.crt");
  const made = Bun.spawnSync(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "30", "-subj", "/CN=longer", "-keyout", join(dir, "expiry-longer.key"), "-out", longer]);
  expect(made.exitCode).toBe(0);
  expect(certificateNotAfter(readFileSync(leaf, "utf8"))).toBe(enddate(leaf));
  // Either order of the chain: the earliest expiry is the one that breaks HTTPS first.
  expect(certificateNotAfter(readFileSync(longer, "utf8") + readFileSync(leaf, "utf8"))).toBe(enddate(leaf));
  expect(certificateNotAfter(readFileSync(longer, "utf8"))).toBe(enddate(longer));
  expect(enddate(longer) - enddate(leaf)).toBeGreaterThan(27 * 86400);
});

