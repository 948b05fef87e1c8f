import { describe, expect, test } from "bun:test";
import { connectOptions, DatabaseUrlError, maskDatabaseUrl, parseDatabaseUrl } from "../../src/settings/database-url.ts";

describe("DATABASE_URL is read as libpq reads a connection URI", () => {
  test("user, password, host, port and database, %-decoded", () => {
    expect(parseDatabaseUrl("postgres://app%40corp:p%40ss%3Aword@db.example:6432/costs%20db")).toEqual({
      hosts: ["db.example"], ports: [6432], user: "app@corp", password: "p@ss:word", database: "costs db", sslmode: "prefer", targetSessionAttrs: "any",
    });
  });

  test("postgresql:// too; no port is 5432; no user, password or database leaves them to the defaults", () => {
    expect(parseDatabaseUrl("postgresql://db")).toEqual({ hosts: ["db"], ports: [5432], sslmode: "prefer", targetSessionAttrs: "any" });
  });

  test("several hosts, each with its port or the default, and IPv6 in brackets", () => {
    expect(parseDatabaseUrl("postgres://u@primary:5433,[::1]:5434,replica/costs?target_session_attrs=read-write")).toMatchObject({
      hosts: ["primary", "::1", "replica"], ports: [5433, 5434, 5432], targetSessionAttrs: "read-write",
    });
  });

  test("no host is the Unix socket in /var/run/postgresql; ?host=/dir names another socket directory", () => {
    expect(parseDatabaseUrl("postgres:///costs")).toMatchObject({ hosts: ["/var/run/postgresql"], ports: [5432], database: "costs" });
    const target = parseDatabaseUrl("postgres://u@/costs?host=/tmp&port=5433");
    expect(target).toMatchObject({ hosts: ["/tmp"], ports: [5433] });
    expect(connectOptions(target)).toMatchObject({ path: "/tmp/.s.PGSQL.5433", ssl: false });
  });

  test("query parameters: password, user, dbname, application_name, connect_timeout, options, sslmode", () => {
    expect(parseDatabaseUrl("postgres://h/x?password=s%26cret&user=u&dbname=costs&application_name=pce-2&connect_timeout=7&options=-c%20search_path%3Dcosts&sslmode=require")).toEqual({
      hosts: ["h"], ports: [5432], password: "s&cret", user: "u", database: "costs", applicationName: "pce-2", connectTimeoutS: 7,
      options: "-c search_path=costs", sslmode: "require", targetSessionAttrs: "any",
    });
  });

  test("connect_timeout: 0 leaves DB_CONNECT_TIMEOUT_MS in charge; 1 is raised to libpq's minimum of 2", () => {
    expect(parseDatabaseUrl("postgres://h/x?connect_timeout=0").connectTimeoutS).toBeUndefined();
    expect(parseDatabaseUrl("postgres://h/x?connect_timeout=1").connectTimeoutS).toBe(2);
  });

  test("sslrootcert=system means verify-full against the system's certificates", () => {
    expect(parseDatabaseUrl("postgres://h/x?sslrootcert=system").sslmode).toBe("verify-full");
  });

  test("the password never goes to PostgreSQL as a setting: it is postgres.js's pass", () => {
    const options = connectOptions(parseDatabaseUrl("postgres://u@h/x?password=secret"));
    expect(options).toMatchObject({ pass: "secret", user: "u", database: "x", ssl: "prefer" });
    expect(JSON.stringify(options.connection ?? {})).not.toContain("secret");
  });

  test.each([
    ["mysql://h/x", "must start with postgres:// or postgresql://"],
    ["postgres://h/x?sslmode=bogus", "sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full"],
    ["postgres://h/x?target_session_attrs=master", "target_session_attrs=master is not one of any, read-write, read-only, primary, standby, prefer-standby"],
    ["postgres://h/x?keepalives=1", 'unsupported parameter "keepalives" (supported: host, port, dbname, user, password, sslmode, sslrootcert, sslcert, sslkey, application_name, connect_timeout, target_session_attrs, options)'],
    ["postgres://h:99999/x", 'port "99999" is not a number from 1 to 65535'],
    ["postgres://h:abc/x", 'port "abc" is not a number from 1 to 65535'],
    ["postgres://h/x?connect_timeout=5s", "connect_timeout=5s is not a whole number of seconds"],
    ["postgres://h/x?sslmode=require&sslmode=disable", "parameter sslmode is given twice"],
    ["postgres://h/x?sslrootcert=/nonexistent/root.crt", "sslrootcert /nonexistent/root.crt cannot be read: ENOENT"],
    ["postgres://h/x?sslcert=/etc/hostname", "sslcert and sslkey go together"],
    // The packaged service's copy of a file not in /etc/product-cost-export: the file to put there is named.
    [
      "postgres://h/x?sslcert=/etc/hostname&sslkey=/run/product-cost-export/db-client-key",
      "sslkey /run/product-cost-export/db-client-key (a copy of /etc/product-cost-export/db-client-key.pem, made at each start: fix or put that file there) cannot be read: ENOENT",
    ],
    ["postgres://a,,b/x", "a host in the host list is empty"],
    ["postgres://a,b:1,c:2/x?port=1,2", "2 ports for 3 hosts"],
    ["postgres:///x?sslmode=require", "sslmode=require over a Unix socket: PostgreSQL never offers TLS there"],
    ["postgres://u:p%zz@h/x", "the password has a malformed %-escape"],
    ["postgres://[::1/x", 'host "[::1" opens [ without closing it'],
  ])("%s is refused: %s", (url, message) => {
    expect(() => parseDatabaseUrl(url)).toThrow(new DatabaseUrlError(message));
  });

  test("no error message carries the password", () => {
    for (const url of ["postgres://u:hunter2@h:0/x", "postgres://u:hunter2@h/x?sslmode=nope", "postgres://h/x?password=hunter2&bogus=1"]) {
      try {
        parseDatabaseUrl(url);
        throw new Error("accepted");
      } catch (err) {
        expect((err as Error).message).not.toContain("hunter2");
      }
    }
  });
});

describe("maskDatabaseUrl hides every password", () => {
  test.each([
    ["postgres://u:hunter2@h:5432/x", "postgres://u:***@h:5432/x"],
    ["postgres://u@h/x?sslmode=require&password=hunter2&application_name=a", "postgres://u@h/x?sslmode=require&password=***&application_name=a"],
    ["postgres://u:hunter2@h/x?PASSWORD=hunter2", "postgres://u:***@h/x?PASSWORD=***"],
    ["postgres://u:p@ss@h1,h2/x", "postgres://u:***@h1,h2/x"],
    ["postgres://h/x", "postgres://h/x"],
    ["not a url hunter2", "(not a URL)"],
  ])("%s → %s", (url, masked) => {
    expect(maskDatabaseUrl(url)).toBe(masked);
  });
});

describe("a password with special characters, as the README says", () => {
  test("percent-encoded %, /, ? and # arrive as themselves", () => {
    expect(parseDatabaseUrl("postgres://u:a%25b%2Fc%3Fd%23e@h/db").password).toBe("a%b/c?d#e");
  });
  test("unencoded, / and ? break the URL: exit 2 with the reason, never a wrong password", () => {
    expect(() => parseDatabaseUrl("postgres://u:a/b@h/db")).toThrow(DatabaseUrlError);
    expect(() => parseDatabaseUrl("postgres://u:a?b@h/db")).toThrow(DatabaseUrlError);
  });
});
