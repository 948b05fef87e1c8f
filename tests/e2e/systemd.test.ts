// The .deb under a real systemd (252, Debian 12, booted by systemd-nspawn from a minimal
// root file system: tests/support/systemd-machine.ts), driven as the README's deploy steps
// say: install, configure, start (it returns once /readyz answers), rows from the host's
// PostgreSQL, a key added and `systemctl reload`, the journal's priorities, kill -9, bad
// configuration, the refresh timer, the sandbox's exposure, a clean stop, an upgrade that
// keeps the configuration and restarts the service, a disabled timer kept disabled through a
// reinstall and a remove, HTTPS as step 7 says, and a purge that leaves nothing. Then the
// README's deploy steps 1 to 7 again from the purged machine, their commands read from
// README.md and run as pasted, against a PostgreSQL with passwords and verified TLS.
// Needs root; installs mmdebstrap and systemd-container with apt when missing. Where it
// cannot run it fails with the reason, unless PCE_SKIP_SYSTEMD_TESTS=1 (then each test is
// reported as skipped, the reason in its name).

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { X509Certificate } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import postgres from "postgres";
import { builtBinary } from "../support/binary.ts";
import { createCluster, type Cluster } from "../support/cluster.ts";
import { SERVER_URL } from "../support/database.ts";
import { unusedPort } from "../support/ports.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { bootMachine, SKIP_VARIABLE, systemdTestsUnavailable, type Machine } from "../support/systemd-machine.ts";

const ROOT = resolve(import.meta.dir, "../..");
const VERSION = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;
const UPGRADE = `${VERSION}+upgrade1`; // sorts after VERSION, as a later release does
const CONF = "/etc/product-cost-export";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31&segment=all";
const JAN_ROWS =
  '[{"erp_product_id":11,"erp_sku":"SKU-1","product_name":"One","purchase_cost_usd":1.5,"inbound_freight_usd":2,"shipping_to_customer_usd":3,"warehouse_fees_usd":4}]';

const skipped = process.env[SKIP_VARIABLE] === "1";
const unavailable = skipped ? undefined : systemdTestsUnavailable();

if (skipped) {
  describe.skip(`the .deb under a real systemd (skipped: ${SKIP_VARIABLE}=1)`, () => {
    test("not run", () => {});
  });
} else if (unavailable) {
  test("the .deb under a real systemd", () => {
    throw new Error(`${unavailable} (or set ${SKIP_VARIABLE}=1 to skip these tests)`);
  });
} else {
  describeWithPostgres("the .deb under a real systemd", () => {
    const db = `pce_systemd_${process.pid}`;
    const port = unusedPort();
    const base = `http://127.0.0.1:${port}`;
    const work = mkdtempSync(join(tmpdir(), "pce-deb-"));
    let machine: Machine;
    let key = "";

    const dbUrl = (() => {
      const u = new URL(SERVER_URL);
      u.pathname = "/" + db;
      return u.toString();
    })();
    const get = (path: string, token?: string) => fetch(base + path, { headers: token ? { authorization: `Bearer ${token}` } : {} });
    const show = (unit: string, ...properties: string[]) =>
      Object.fromEntries(
        machine
          .sh(`systemctl show -p ${properties.join(",")} ${unit}`)
          .trim()
          .split("\n")
          .map((l) => [l.slice(0, l.indexOf("=")), l.slice(l.indexOf("=") + 1)]),
      );
    const journal = (args: string) => machine.sh(`journalctl -u product-cost-export --no-pager -o cat ${args}`);
    const waitFor = async (what: string, check: () => Promise<boolean>) => {
      for (let i = 0; i < 150; i++) {
        if (await check().catch(() => false)) return;
        await Bun.sleep(100);
      }
      throw new Error(`timed out waiting for ${what}`);
    };

    let BINARY: string;
    beforeAll(async () => {
      BINARY = builtBinary();
      // The packages, as `bash build.sh deb` makes them, of the executable the suite tests.
      for (const version of [VERSION, UPGRADE]) {
        const r = Bun.spawnSync(["bash", ".ci/package-deb.sh", BINARY, "amd64", version, work, BINARY], {
          cwd: ROOT,
          env: { ...process.env, DEB_COMPRESSION: "gzip" },
          stderr: "pipe",
        });
        if (r.exitCode !== 0) throw new Error(`package-deb.sh failed: ${r.stderr.toString()}`);
      }
      // The company's PostgreSQL, on the host: migrated by its owner, one product.
      const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
      await server.unsafe(`drop database if exists ${db} with (force)`);
      await server.unsafe(`create database ${db}`);
      await server.end();
      const migrated = Bun.spawnSync([BINARY, "migrate"], { env: { PATH: "/usr/bin:/bin", DATABASE_URL: dbUrl }, stderr: "pipe" });
      if (migrated.exitCode !== 0) throw new Error(`migrate failed: ${migrated.stderr.toString()}`);
      const admin = postgres(dbUrl, { max: 1, onnotice: () => {} });
      await admin`insert into products values (1, 11, 'SKU-1', 'One', false)`;
      await admin`insert into product_daily_costs values (1, '2024-01-05', 1.5, 2, 3, 4)`;
      await admin.end();

      machine = await bootMachine();
      for (const version of [VERSION, UPGRADE]) {
        Bun.spawnSync(["cp", join(work, `product-cost-export_${version}_amd64.deb`), join(machine.root, "root/")]);
      }
    }, 180_000);

    afterAll(async () => {
      await machine?.destroy();
      rmSync(work, { recursive: true, force: true });
      const server = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
      await server.unsafe(`drop database if exists ${db} with (force)`);
      await server.end();
    }, 60_000);

    test("lintian reports no error, warning or info on the package: only the tags .ci/deb/lintian-overrides overrides, each with why, and each override used", () => {
      const r = Bun.spawnSync(["lintian", "--display-info", "--tag-display-limit", "0", join(work, `product-cost-export_${VERSION}_amd64.deb`)], { stdout: "pipe", stderr: "pipe" });
      // An override that matches nothing is itself reported (mismatched-override, a warning).
      expect(r.stdout.toString().split("\n").filter((l) => /^[EWIPXO]: /.test(l))).toEqual([]);
      expect(r.exitCode).toBe(0);
      // What is overridden, each after a comment saying why (docs/deb-package.md lists them).
      const lines = readFileSync(join(ROOT, ".ci/deb/lintian-overrides"), "utf8").trimEnd().split("\n");
      const overrides = lines.filter((l) => !l.startsWith("#"));
      expect(new Set(overrides.map((l) => l.split(" ")[1]))).toEqual(
        new Set(["unstripped-binary-or-object", "embedded-library", "hardening-no-pie", "hardening-no-relro", "hardening-no-bindnow", "spelling-error-in-binary", "package-supports-alternative-init-but-no-init.d-script", "spelling-error-in-changelog"]),
      );
      expect(overrides.every((l) => l.startsWith("product-cost-export: ") && / \[[^\]]+\]$/.test(l))).toBe(true);
      // No blank line, and a comment first: every override sits under the comment of its group.
      expect([lines[0]!.startsWith("# "), lines.filter((l) => l.trim() === "")]).toEqual([true, []]);
    }, 120_000);

    test("apt install: the executable, the units enabled, /etc/product-cost-export mode 0700, nothing started before it is configured", () => {
      const installed = machine.run(["apt-get", "install", "-y", "-q", `/root/product-cost-export_${VERSION}_amd64.deb`]);
      expect(installed.code).toBe(0);
      expect(installed.stdout + installed.stderr).toContain(`product-cost-export: not started: write ${CONF}/env`);
      expect(machine.sh("stat -c '%a %U' /etc/product-cost-export").trim()).toBe("700 root");
      expect(machine.sh("product-cost-export version")).toStartWith(`product-cost-export ${VERSION}`);
      // The alert rules and the dashboard come with it (README: Monitoring), as in the source tree.
      expect(machine.sh("cat /usr/share/doc/product-cost-export/monitoring/alerts.yml")).toBe(readFileSync(join(ROOT, "docs/monitoring/alerts.yml"), "utf8"));
      expect(machine.run(["test", "-f", "/usr/share/doc/product-cost-export/monitoring/grafana-dashboard.json"]).code).toBe(0);
      expect(machine.sh("cat /usr/share/doc/product-cost-export/env.example")).toBe(readFileSync(join(ROOT, "docs/env.example"), "utf8"));
      expect(show("product-cost-export.service", "UnitFileState", "ActiveState", "Type", "DynamicUser")).toEqual({
        UnitFileState: "enabled",
        ActiveState: "inactive",
        Type: "notify",
        DynamicUser: "yes",
      });
      expect(show("product-cost-export-refresh.timer", "UnitFileState")).toEqual({ UnitFileState: "enabled" });
      // The manual page and the README the units point at (systemctl help), and every file as its md5sums say.
      // systemctl show quotes a URL with parentheses.
      expect(show("product-cost-export.service", "Documentation")).toEqual({ Documentation: '"man:product-cost-export(1)" file:/usr/share/doc/product-cost-export/README.md' });
      expect(machine.run(["test", "-f", "/usr/share/man/man1/product-cost-export.1.gz"]).code).toBe(0);
      expect(machine.sh("cat /usr/share/doc/product-cost-export/README.md")).toBe(readFileSync(join(ROOT, "README.md"), "utf8"));
      expect(machine.run(["dpkg", "--verify", "product-cost-export"])).toEqual({ code: 0, stdout: "", stderr: "" });
    });

    test("configured as the README says: `systemctl start` returns once /readyz answers, with rows from the host's PostgreSQL", async () => {
      machine.sh(`install -m 0600 /dev/null ${CONF}/env && printf 'DATABASE_URL=%s\\nPORT=%s\\n' '${dbUrl}' ${port} >> ${CONF}/env`);
      const generated = machine.sh(`install -m 0600 /dev/null ${CONF}/api-keys && product-cost-export generate-key --label first`).split("\n");
      key = generated[0]!;
      machine.sh(`echo '${generated[1]}' >> ${CONF}/api-keys`);
      expect(machine.run(["systemctl", "start", "product-cost-export"]).code).toBe(0);
      // At once, no retry: Type=notify returned only once the service listened.
      const ready = await get("/readyz");
      expect([ready.status, await ready.text()]).toEqual([200, '{"detail":"READY"}']);
      const rows = await get(JAN, key);
      expect([rows.status, await rows.text()]).toEqual([200, JAN_ROWS]);
      expect(show("product-cost-export.service", "StatusText")).toEqual({ StatusText: `listening on http://0.0.0.0:${port}/` });
    });

    test("a key added to the key file and `systemctl reload`: the key works at once, the journal says added 1", async () => {
      const [newKey, line] = machine.sh("product-cost-export generate-key --label second").split("\n");
      machine.sh(`echo '${line}' >> ${CONF}/api-keys`);
      expect((await get(JAN, newKey)).status).toBe(401);
      expect(machine.run(["systemctl", "reload", "product-cost-export"]).code).toBe(0);
      expect((await get(JAN, newKey)).status).toBe(200);
      expect((await get(JAN, key)).status).toBe(200);
      expect(journal("").trim().split("\n").filter((l) => l.includes('"msg":"api keys reloaded"')).at(-1)).toContain('"api_keys":2,"added":1,"removed":0');
      // Removed and reloaded: gone at once.
      machine.sh(`sed -i '/# second$/d' ${CONF}/api-keys`);
      expect(machine.run(["systemctl", "reload", "product-cost-export"]).code).toBe(0);
      expect((await get(JAN, newKey)).status).toBe(401);
      expect(show("product-cost-export.service", "ActiveState", "NRestarts")).toEqual({ ActiveState: "active", NRestarts: "0" });
    });

    test("`journalctl -p warning` shows the service's warnings, not its request lines", async () => {
      machine.sh(`echo 'short-key' >> ${CONF}/api-keys && systemctl reload product-cost-export`);
      const warnings = journal("-p warning");
      expect(warnings).toContain('"msg":"weak API key"');
      expect(warnings).not.toContain('"msg":"request"');
      expect(journal("")).toContain('"msg":"request"');
      machine.sh(`sed -i '/^short-key$/d' ${CONF}/api-keys && systemctl reload product-cost-export`);
    });

    test("kill -9: systemd starts it again, and it answers", async () => {
      const before = show("product-cost-export.service", "MainPID").MainPID!;
      machine.sh(`kill -9 ${before}`);
      await waitFor("a restart", async () => {
        const now = show("product-cost-export.service", "MainPID", "ActiveState");
        return now.ActiveState === "active" && now.MainPID !== before && now.MainPID !== "0";
      });
      expect(show("product-cost-export.service", "NRestarts")).toEqual({ NRestarts: "1" });
      expect((await get("/readyz")).status).toBe(200);
    });

    test("bad configuration: exit code 2, the cause in the journal, no restart loop", async () => {
      machine.sh(`cp ${CONF}/env /root/env.good && echo 'PORT=not-a-port' >> ${CONF}/env`);
      expect(machine.run(["systemctl", "restart", "product-cost-export"]).code).not.toBe(0);
      await Bun.sleep(3000); // RestartSec=2: a restart would have happened by now
      expect(show("product-cost-export.service", "ActiveState", "ExecMainStatus", "NRestarts")).toEqual({ ActiveState: "failed", ExecMainStatus: "2", NRestarts: "0" });
      expect(journal("")).toContain("PORT must be a whole number");
      // At priority err: the alerts' `journalctl -p warning` shows why it stopped.
      expect(journal("-p warning")).toContain("product-cost-export: PORT must be a whole number");
      machine.sh(`cp /root/env.good ${CONF}/env && systemctl reset-failed product-cost-export && systemctl start product-cost-export`);
      expect((await get("/readyz")).status).toBe(200);
    });

    test("the refresh: its timer listed once refresh.env exists, the refresh service succeeding", () => {
      machine.sh(`install -m 0600 /dev/null ${CONF}/refresh.env && echo 'DATABASE_URL=${dbUrl}' >> ${CONF}/refresh.env`);
      machine.sh("systemctl enable --now product-cost-export-refresh.timer");
      expect(machine.sh("systemctl list-timers --all --no-pager")).toContain("product-cost-export-refresh.timer");
      expect(machine.run(["systemctl", "start", "product-cost-export-refresh.service"]).code).toBe(0);
      expect(show("product-cost-export-refresh.service", "Result", "ExecMainStatus")).toEqual({ Result: "success", ExecMainStatus: "0" });
      expect(machine.sh("journalctl -u product-cost-export-refresh --no-pager -o cat")).toContain('"msg":"refreshed"');
    });

    test("systemd-analyze security: exposure at most 2.0", () => {
      const out = machine.run(["systemd-analyze", "security", "--no-pager", "product-cost-export.service"]).stdout;
      const exposure = Number(/Overall exposure level for product-cost-export\.service: ([\d.]+)/.exec(out)?.[1]);
      expect(exposure).toBeLessThanOrEqual(2.0);
    });

    test("a clean stop: SIGTERM, exit 0", () => {
      expect(machine.run(["systemctl", "stop", "product-cost-export"]).code).toBe(0);
      expect(show("product-cost-export.service", "Result", "ExecMainStatus")).toEqual({ Result: "success", ExecMainStatus: "0" });
      expect(journal("")).toContain('"msg":"stopped"');
      expect(machine.run(["systemctl", "start", "product-cost-export"]).code).toBe(0);
    });

    test("upgrade to a newer .deb: the configuration kept, the running service restarted onto the new executable", async () => {
      const env = machine.sh(`cat ${CONF}/env ${CONF}/api-keys`);
      const before = show("product-cost-export.service", "MainPID").MainPID;
      const upgraded = machine.run(["apt-get", "install", "-y", "-q", `/root/product-cost-export_${UPGRADE}_amd64.deb`]);
      expect(upgraded.code).toBe(0);
      // The order of an upgrade, said where it is done: this package, then migrate (README: Upgrade).
      expect(upgraded.stdout + upgraded.stderr).toContain(`product-cost-export: upgraded from ${VERSION}. Next, as the tables' owner:`);
      expect(machine.sh("dpkg-query -W -f '${Version}' product-cost-export")).toBe(UPGRADE);
      expect(machine.sh(`cat ${CONF}/env ${CONF}/api-keys`)).toBe(env);
      const after = show("product-cost-export.service", "MainPID", "ActiveState");
      expect(after.ActiveState).toBe("active");
      expect(after.MainPID).not.toBe(before);
      expect((await get(JAN, key)).status).toBe(200);
    });

    test("a timer the operator disabled stays disabled: through a reinstall, and through apt remove then install", () => {
      machine.sh("systemctl disable --now product-cost-export-refresh.timer");
      const deb = `/root/product-cost-export_${UPGRADE}_amd64.deb`;
      const units = () => [show("product-cost-export.service", "UnitFileState", "ActiveState"), show("product-cost-export-refresh.timer", "UnitFileState", "ActiveState")];
      const asLeft = [
        { UnitFileState: "enabled", ActiveState: "active" },
        { UnitFileState: "disabled", ActiveState: "inactive" },
      ];
      // The same version again (README: a rebuilt package of the same version needs --reinstall).
      expect(machine.run(["apt-get", "install", "-y", "-q", "--reinstall", deb]).code).toBe(0);
      expect(units()).toEqual(asLeft);
      expect(machine.run(["apt-get", "remove", "-y", "-q", "product-cost-export"]).code).toBe(0);
      expect(show("product-cost-export.service", "ActiveState")).toEqual({ ActiveState: "inactive" });
      expect(machine.run(["apt-get", "install", "-y", "-q", deb]).code).toBe(0);
      expect(units()).toEqual(asLeft);
    }, 120_000);

    test("rollback as the README says: apt install --allow-downgrades the previous .deb, the configuration kept, serving", async () => {
      const rolledBack = machine.run(["apt-get", "install", "-y", "-q", "--allow-downgrades", `/root/product-cost-export_${VERSION}_amd64.deb`]);
      expect(rolledBack.code).toBe(0);
      expect(machine.sh("dpkg-query -W -f '${Version}' product-cost-export")).toBe(VERSION);
      expect(show("product-cost-export.service", "ActiveState")).toEqual({ ActiveState: "active" });
      expect((await get(JAN, key)).status).toBe(200);
    }, 120_000);

    test("HTTPS as README step 7: the certificate and key in /etc/product-cost-export, two lines in env, a restart", () => {
      // A self-signed certificate for the address the test connects to, made on the host.
      const tls = mkdtempSync(join(tmpdir(), "pce-tls-"));
      const made = Bun.spawnSync(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
          "-keyout", join(tls, "key.pem"), "-out", join(tls, "cert.pem")],
        { stderr: "pipe" },
      );
      expect(made.exitCode).toBe(0);
      Bun.spawnSync(["cp", join(tls, "cert.pem"), join(tls, "key.pem"), join(machine.root, "root/")]);
      const notAfter = Date.parse(new X509Certificate(readFileSync(join(tls, "cert.pem"))).validTo) / 1000;
      rmSync(tls, { recursive: true, force: true });
      machine.sh(`cd ${CONF} && install -m 0600 /root/cert.pem tls-cert.pem && install -m 0600 /root/key.pem tls-key.pem`);
      machine.sh(`cd ${CONF} && printf 'TLS_CERT_FILE=/run/product-cost-export/tls-cert\\nTLS_KEY_FILE=/run/product-cost-export/tls-key\\n' >> env`);
      expect(machine.run(["systemctl", "restart", "product-cost-export"]).code).toBe(0);
      expect(machine.sh(`curl -sS --cacert /root/cert.pem https://127.0.0.1:${port}/readyz`)).toBe('{"detail":"READY"}');
      // The served certificate's expiry, for the alert ProductCostExportCertificateExpiring.
      const metrics = machine.sh(`curl -sS --cacert /root/cert.pem https://127.0.0.1:${port}/metrics`);
      const expiry = Number(/^product_cost_export_tls_certificate_expiry_timestamp_seconds (\S+)$/m.exec(metrics)?.[1]);
      expect(expiry).toBe(notAfter);
      expect(Math.abs(expiry - Date.now() / 1000 - 2 * 86400)).toBeLessThan(600);
      expect(machine.run(["curl", "-sS", `http://127.0.0.1:${port}/readyz`]).code).not.toBe(0);
    }, 30_000);

    test("apt purge: the service stopped, and nothing left (executable, units, configuration, runtime files)", async () => {
      expect(machine.run(["apt-get", "purge", "-y", "-q", "product-cost-export"]).code).toBe(0);
      const left = machine.run(["sh", "-c", "ls -d /usr/bin/product-cost-export /lib/systemd/system/product-cost-export* /etc/systemd/system/*/product-cost-export* /etc/product-cost-export /run/product-cost-export 2>/dev/null"]);
      expect(left.stdout).toBe("");
      await expect(get("/readyz")).rejects.toThrow();
    });

    // After the purge, the README's deploy steps 1 to 7 from the start, their commands taken
    // from README.md and run as pasted, against a company PostgreSQL as the README has it: the
    // host `db`, a database `costs` of an `owner`, passwords (scram-sha-256), TLS verified
    // against the company's CA in /etc/ssl/certs. What the test changes in the text, an
    // operator would too: the server's port, its passwords, and the port the service listens on.
    describe("the README's deploy steps as pasted, after the purge", () => {
      let cluster: Cluster;
      const OWNER_PASSWORD = "owner-pw-7c1e";
      const SUPERUSER_PASSWORD = "dba-pw-51d0";
      const tls = mkdtempSync(join(tmpdir(), "pce-readme-tls-"));
      const openssl = (...args: string[]) => {
        const r = Bun.spawnSync(["openssl", ...args], { cwd: tls, stderr: "pipe" });
        if (r.exitCode !== 0) throw new Error(`openssl ${args[0]} failed: ${r.stderr.toString()}`);
      };
      beforeAll(async () => {
        // The company's CA, and the server's certificate for the name `db`.
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=Company CA", "-keyout", "ca.key", "-out", "ca.pem");
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=db", "-keyout", "db.key", "-out", "db.csr");
        writeFileSync(join(tls, "san.ext"), "subjectAltName=DNS:db\n");
        openssl("x509", "-req", "-in", "db.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-extfile", "san.ext", "-out", "db.pem");
        // (The role `certified` logs in by a client certificate the company CA signed: pg_hba `cert`.)
        const ca = readFileSync(join(tls, "ca.pem"), "utf8");
        cluster = await createCluster({
          password: SUPERUSER_PASSWORD,
          tls: { cert: readFileSync(join(tls, "db.pem"), "utf8"), key: readFileSync(join(tls, "db.key"), "utf8"), clientCa: ca },
          hba: ["hostssl all certified 127.0.0.1/32 cert"],
        });
        cluster.start();
        const server = postgres(`postgres://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${cluster.port}/postgres`, { max: 1, onnotice: () => {} });
        await server.unsafe("create role certified login in role pg_read_all_data");
        await server.unsafe(`create role owner login password '${OWNER_PASSWORD}'`);
        await server.unsafe("create database costs owner owner");
        await server.end();
        // The VM's view of it: the name `db`, and the company's CA where all may read it.
        machine.sh("echo '127.0.0.1 db' >> /etc/hosts");
        Bun.spawnSync(["cp", join(tls, "ca.pem"), join(machine.root, "etc/ssl/certs/db-ca.pem")]);
      }, 60_000);
      afterAll(() => {
        cluster?.destroy();
        rmSync(tls, { recursive: true, force: true });
      });

      /** The README's deploy step `n`: its shell blocks and its inline commands, in order. */
      const step = (n: number) => {
        const readme = readFileSync(join(ROOT, "README.md"), "utf8");
        const deploy = readme.slice(readme.indexOf("## Deploy on a VM under systemd"), readme.indexOf("### The refresh"));
        const text = deploy.slice(deploy.indexOf(`\n${n}. `), deploy.indexOf(`\n${n + 1}. `) > 0 ? deploy.indexOf(`\n${n + 1}. `) : undefined);
        const blocks = [...text.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!.replace(/^ {3}/gm, ""));
        const inline = [...text.replace(/```sh\n[\s\S]*?```/g, "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
        return { blocks, inline };
      };
      // What an operator fills in: the server's port (5432 in the text), the passwords, the listening port.
      const filled = (command: string, password = "") =>
        command
          .replaceAll("@db:5432/", `@db:${cluster.port}/`)
          .replaceAll("@db/", `@db:${cluster.port}/`)
          .replaceAll("postgres://owner@", `postgres://owner:${OWNER_PASSWORD}@`)
          .replaceAll("postgres://owner:<password>@", `postgres://owner:${OWNER_PASSWORD}@`)
          .replaceAll("<password>", password)
          .replaceAll("postgres://dba@", `postgres://postgres:${SUPERUSER_PASSWORD}@`)
          .replaceAll("127.0.0.1:8080", `127.0.0.1:${port}`);
      let password = "";
      let clientKey = "";

      test("steps 1 to 4: install, migrate, the read-only role, configure and start: READY over a verified TLS connection to db", async () => {
        const install = step(1).inline.find((c) => c.startsWith("apt install ./"))!;
        expect(install).toBe(`apt install ./product-cost-export_${VERSION}_amd64.deb`);
        expect(machine.run(["sh", "-c", `cd /root && ${install} < /dev/null`]).code).toBe(0);

        const migrate = step(2).inline.find((c) => c.includes(" migrate"))!;
        expect(machine.run(["sh", "-c", filled(migrate)]).code).toBe(0);

        const [role] = step(3).blocks;
        const made = machine.run(["sh", "-c", filled(role!)]);
        expect([made.code, made.stderr]).toEqual([0, ""]);
        password = made.stdout.trim().split("\n")[0]!;
        expect(password).toMatch(/^[0-9a-f]{48}$/);

        const [configure] = step(4).blocks;
        // The service's port is this test's (the machine shares the host's network).
        const script = filled(configure!, password).replace("install -m 0600 /dev/null api-keys", `echo 'PORT=${port}' >> env\ninstall -m 0600 /dev/null api-keys`);
        const started = machine.run(["sh", "-c", script]);
        expect(started.code).toBe(0);
        clientKey = /^key: (\S+)$/m.exec(started.stdout)?.[1] ?? "";
        expect(machine.sh(`cat ${CONF}/api-keys`)).toMatch(/^sha256:[0-9a-f]{64} {2}# BI team\n$/);
        expect(machine.sh(`cat ${CONF}/env`)).toContain("sslmode=verify-full&sslrootcert=/etc/ssl/certs/db-ca.pem");
        const ready = await get("/readyz");
        expect([ready.status, await ready.text()]).toEqual([200, '{"detail":"READY"}']);
        const rows = await get(JAN, clientKey);
        expect([rows.status, await rows.text()]).toEqual([200, "[]"]);
      }, 180_000);

      test("step 5: the refresh timer as the owner; step 6: the checks say ready", async () => {
        const commands = step(5).inline;
        const url = filled(commands.find((c) => c.startsWith("DATABASE_URL="))!);
        machine.sh(`cd ${CONF} && ${commands.find((c) => c.startsWith("install "))} && echo '${url}' >> refresh.env`);
        machine.sh(commands.find((c) => c.startsWith("systemctl enable"))!);
        expect(show("product-cost-export-refresh.timer", "ActiveState")).toEqual({ ActiveState: "active" });
        expect(machine.run(["systemctl", "start", "product-cost-export-refresh.service"]).code).toBe(0);
        expect(show("product-cost-export-refresh.service", "Result")).toEqual({ Result: "success" });

        const [curl, journalctl] = step(6).inline;
        expect(machine.sh(filled(curl!))).toBe('{"detail":"READY"}');
        const lines = machine.sh(journalctl!).split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l).msg);
        expect(lines.slice(0, 2)).toEqual(["listening", "database ready"]);
      }, 120_000);

      test("step 7: HTTPS by two lines in env and a restart", () => {
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", "key.pem", "-out", "cert.pem");
        Bun.spawnSync(["cp", join(tls, "cert.pem"), join(tls, "key.pem"), join(machine.root, "root/")]);
        machine.sh(`cd ${CONF} && install -m 0600 /root/cert.pem tls-cert.pem && install -m 0600 /root/key.pem tls-key.pem`);
        const commands = step(7).inline;
        machine.sh(`cd ${CONF} && ${commands.find((c) => c.startsWith("printf "))}`);
        machine.sh(commands.find((c) => c.startsWith("systemctl restart"))!);
        expect(machine.sh(`curl -sS --cacert /root/cert.pem https://127.0.0.1:${port}/readyz`)).toBe('{"detail":"READY"}');
        expect(machine.sh(`curl -sS --cacert /root/cert.pem -H 'Authorization: Bearer ${clientKey}' 'https://127.0.0.1:${port}${JAN}'`)).toBe("[]");
      }, 60_000);

      test("a client certificate as docs/database.md says: the cert and key in /etc/product-cost-export, the URL naming their copies", async () => {
        openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=certified", "-keyout", "client.key", "-out", "client.csr");
        openssl("x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2", "-out", "client.pem");
        Bun.spawnSync(["cp", join(tls, "client.pem"), join(tls, "client.key"), join(machine.root, "root/")]);
        machine.sh(`cd ${CONF} && install -m 0600 /root/client.pem db-client-cert.pem && install -m 0600 /root/client.key db-client-key.pem`);
        const url = `postgres://certified@db:${cluster.port}/costs?sslmode=verify-full&sslrootcert=/etc/ssl/certs/db-ca.pem&sslcert=/run/product-cost-export/db-client-cert&sslkey=/run/product-cost-export/db-client-key`;
        machine.sh(`cd ${CONF} && sed -i '/^DATABASE_URL=/d' env && echo '${url}' | sed 's/^/DATABASE_URL=/' >> env`);
        machine.sh("systemctl restart product-cost-export");
        expect(machine.sh(`curl -sS --cacert /root/cert.pem https://127.0.0.1:${port}/readyz`)).toBe('{"detail":"READY"}');
        const server = postgres(`postgres://postgres:${SUPERUSER_PASSWORD}@127.0.0.1:${cluster.port}/costs`, { max: 1, onnotice: () => {} });
        const sessions = await server<{ user: string }[]>`select usename::text as user from pg_stat_activity where split_part(application_name, ' ', 1) = 'product-cost-export' and usename is not null`;
        await server.end();
        expect(new Set(sessions.map((s) => s.user))).toEqual(new Set(["certified"]));
      }, 60_000);

      test("then Upgrade and Rollback as pasted, with the timer disabled: it stays disabled, the configuration kept, HTTPS served", () => {
        const readme = readFileSync(join(ROOT, "README.md"), "utf8");
        const section = readme.slice(readme.indexOf("## Upgrade, rollback and backup"), readme.indexOf("## Monitoring"));
        const commands = [...section.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
        const upgrade = commands.find((c) => c.startsWith("apt install ./"))!.replace("<new>", UPGRADE);
        const rollback = commands.find((c) => c.startsWith("apt install --allow-downgrades"))!.replace("<old>", VERSION);
        machine.sh("systemctl disable --now product-cost-export-refresh.timer");
        const configuration = machine.sh(`cat ${CONF}/env ${CONF}/api-keys ${CONF}/refresh.env`);
        const serving = () => machine.sh(`curl -sS --cacert /root/cert.pem https://127.0.0.1:${port}/readyz`);
        for (const [command, version] of [[upgrade, UPGRADE], [rollback, VERSION]] as const) {
          // (A downgrade asks for a yes, as it would at a terminal.)
          const ran = machine.run(["sh", "-c", `cd /root && yes | ${command}`]);
          expect({ command, code: ran.code, errors: ran.stderr.split("\n").filter((l) => l.startsWith("E:")) }).toEqual({ command, code: 0, errors: [] });
          expect(machine.sh("dpkg-query -W -f '${Version}' product-cost-export")).toBe(version);
          expect(show("product-cost-export-refresh.timer", "UnitFileState", "ActiveState")).toEqual({ UnitFileState: "disabled", ActiveState: "inactive" });
          expect(machine.sh(`cat ${CONF}/env ${CONF}/api-keys ${CONF}/refresh.env`)).toBe(configuration);
          expect(serving()).toBe('{"detail":"READY"}');
        }
      }, 180_000);
    });
  });
}
