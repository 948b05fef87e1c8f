// What the packaged unit relies on, without systemd: stage-files copies the operator's files
// for the service's user (and removes what is gone), and the sd_notify address is written as
// systemd expects. (Both run for real under systemd in tests/e2e/systemd.test.ts.)
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { noteReloadDone, stageFiles } from "../../src/cli/stage-files.ts";
import { ConfigError } from "../../src/settings/config.ts";
import { SYSTEMD_CREDENTIAL_NAME } from "../../src/key/api-keys.ts";
import { readTls } from "../../src/edge/server.ts";
import { DATABASE_URL_CREDENTIAL, REFRESH_DATABASE_URL_CREDENTIAL } from "../../src/settings/config.ts";
import { copyOf, STAGED_FILES } from "../../src/ops/units.ts";
import { notifySocketAddress, systemdNotifier } from "../../src/ops/notify.ts";

const work = mkdtempSync(join(tmpdir(), "pce-stage-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("stage-files copies the files that exist under the names the service reads, mode 0400, owned as the runtime directory; a file gone is removed", () => {
  const from = join(work, "etc");
  const to = join(work, "run");
  mkdirSync(from);
  mkdirSync(to, { mode: 0o700 });
  writeFileSync(join(from, "api-keys"), "sha256:ab  # one\n");
  writeFileSync(join(from, "database-url"), "postgres://svc@db/costs\n");
  writeFileSync(join(from, "env"), "PORT=1\n"); // not staged: systemd reads it itself
  expect(stageFiles(from, to)).toEqual(["api-keys", "database-url"]);
  expect(readFileSync(join(to, "product-cost-api-keys"), "utf8")).toBe("sha256:ab  # one\n");
  expect(readFileSync(join(to, "database-url"), "utf8")).toBe("postgres://svc@db/costs\n");
  const staged = statSync(join(to, "product-cost-api-keys"));
  expect([staged.mode & 0o777, staged.uid, staged.gid]).toEqual([0o400, statSync(to).uid, statSync(to).gid]);
  expect(existsSync(join(to, "env"))).toBe(false);

  // Rotation: a changed file replaces its copy; a removed one takes its copy with it.
  writeFileSync(join(from, "api-keys"), "sha256:cd  # two\n");
  rmSync(join(from, "database-url"));
  expect(stageFiles(from, to)).toEqual(["api-keys"]);
  expect(readFileSync(join(to, "product-cost-api-keys"), "utf8")).toBe("sha256:cd  # two\n");
  expect(existsSync(join(to, "database-url"))).toBe(false);
});

test("stage-files outside the unit (no RUNTIME_DIRECTORY) is a configuration error", () => {
  expect(() => stageFiles(join(work, "etc"), undefined)).toThrow(ConfigError);
  expect(() => stageFiles(join(work, "etc"), undefined)).toThrow(/RUNTIME_DIRECTORY is not set/);
});

test("NOTIFY_SOCKET as systemd gives it: a path ends with its NUL, an abstract name starts with one", () => {
  const path = notifySocketAddress("/run/systemd/notify");
  expect([...path.slice(0, 2)]).toEqual([1, 0]); // AF_UNIX, little-endian
  expect(new TextDecoder().decode(path.slice(2))).toBe("/run/systemd/notify\0");
  const abstract = notifySocketAddress("@/org/freedesktop/systemd1/notify/42");
  expect(new TextDecoder().decode(abstract.slice(2))).toBe("\0/org/freedesktop/systemd1/notify/42");
  expect(() => notifySocketAddress("relative/socket")).toThrow("NOTIFY_SOCKET is neither a path nor an abstract socket");
});

test("without NOTIFY_SOCKET nothing is sent; to a socket nobody listens on, the send fails with the socket's name", () => {
  expect(systemdNotifier({}).enabled).toBe(false);
  systemdNotifier({}).notify("READY=1");
  const nobody = systemdNotifier({ NOTIFY_SOCKET: join(work, "no-such-socket") });
  expect(nobody.enabled).toBe(true);
  expect(() => nobody.notify("READY=1")).toThrow(`sd_notify: sendto ${join(work, "no-such-socket")} failed`);
});

describe("errors about a staged copy name the operator's file (issue 46)", () => {
  test("copyOf: the file under /etc/product-cost-export for a copy in /run/product-cost-export or the credentials directory; nothing for any other path", () => {
    const note = (source: string) => ` (a copy of /etc/product-cost-export/${source}, made at each start: fix or put that file there)`;
    expect(copyOf("/run/product-cost-export/tls-cert", undefined)).toBe(note("tls-cert.pem"));
    expect(copyOf("/run/product-cost-export/tls-key", undefined)).toBe(note("tls-key.pem"));
    expect(copyOf("/x/credentials/product-cost-api-keys", "/x/credentials")).toBe(note("api-keys"));
    expect(copyOf("/x/credentials/database-url", "/x/credentials")).toBe(note("database-url"));
    expect(copyOf("/etc/product-cost-export/api-keys", "/x/credentials")).toBe("");
    expect(copyOf("/run/product-cost-export/unknown", undefined)).toBe("");
    expect(copyOf("/srv/keys/product-cost-api-keys", "/x/credentials")).toBe("");
  });

  test("the names stage-files writes are the credentials the service reads", () => {
    expect(STAGED_FILES.map(([, staged]) => staged)).toEqual(expect.arrayContaining([SYSTEMD_CREDENTIAL_NAME, DATABASE_URL_CREDENTIAL, REFRESH_DATABASE_URL_CREDENTIAL]));
  });

  test("an HTTPS start whose certificate copy is missing says which file to put in place", () => {
    expect(() => readTls({ host: "127.0.0.1", port: 0, tlsCertFile: "/run/product-cost-export/tls-cert", tlsKeyFile: "/run/product-cost-export/tls-key" })).toThrow(
      "cannot read TLS_CERT_FILE /run/product-cost-export/tls-cert: ENOENT (a copy of /etc/product-cost-export/tls-cert.pem, made at each start: fix or put that file there)",
    );
  });
});

test("the service counts each finished reload in its runtime directory, for stage-files --reload to wait on", () => {
  const dir = join(work, "reloads");
  mkdirSync(dir);
  noteReloadDone(dir);
  noteReloadDone(dir);
  expect(readFileSync(join(dir, "reloads"), "utf8")).toBe("2");
  noteReloadDone(undefined); // outside the unit: nothing
});
