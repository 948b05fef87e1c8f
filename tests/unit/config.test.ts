// Configuration: every setting from its environment variable or its flag, the flag
// winning; all problems reported together in one ConfigError; --help generated from the
// same table, so it lists every setting with its default.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readCommandLine } from "../../src/cli/command-line.ts";
import { commandHelp, commandNamed, COMMANDS, overviewHelp } from "../../src/cli/commands.ts";
import { ConfigError, SETTINGS, settingsOf, type Config, type SettingSpec } from "../../src/settings/config.ts";
import { loadConfig } from "../support/config.ts";

const work = mkdtempSync(join(tmpdir(), "pce-config-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));
/** A file holding `text`, for the settings that name a file to read. */
function fileWith(name: string, text: string): string {
  const path = join(work, name);
  writeFileSync(path, text);
  return path;
}

/** Two different valid raw values for a setting: [what the environment says, what the flag says]. */
function samples(s: SettingSpec): [string, string] {
  switch (s.kind) {
    case "int": {
      const low = (s.min ?? 0) + 1;
      return [String(low), String(low + 1)];
    }
    case "bool":
      return ["true", "false"];
    case "enum":
      return [s.choices![0]!, s.choices![1]!];
    case "string":
      if (s.env === "DATABASE_URL") return ["postgres://env-host/db", "postgres://flag-host/db"];
      if (s.env === "DATABASE_URL_FILE") return [fileWith("env-url", "postgres://env-host/db\n"), fileWith("flag-url", "postgres://flag-host/db")];
      if (s.env === "REFRESH_DATABASE_URL") return ["postgres://owner@env-host/db", "postgres://owner@flag-host/db"];
      if (s.env === "REFRESH_DATABASE_URL_FILE") return [fileWith("env-refresh-url", "postgres://owner@env-host/db\n"), fileWith("flag-refresh-url", "postgres://owner@flag-host/db")];
      if (s.env === "HOST") return ["env-host.internal", "127.0.0.2"];
      if (s.env === "TRUSTED_PROXIES") return ["10.0.0.0/8", "127.0.0.1, ::1"];
      if (s.env === "CORS_ALLOWED_ORIGINS") return ["https://env.example.com", "http://127.0.0.1:5173"];
      return ["/from/env", "/from/flag"];
  }
}

function parsed(s: SettingSpec, raw: string): unknown {
  if (s.kind === "int") return Number(raw);
  if (s.kind === "bool") return raw === "true";
  return raw;
}

/** The certificate and key only come as a pair; the service's own refresh needs the database it reads. */
const partnerOf = (s: SettingSpec): Record<string, string> =>
  s.env.startsWith("TLS_") ? { TLS_CERT_FILE: "/c.pem", TLS_KEY_FILE: "/k.pem" } : s.env.startsWith("REFRESH_DATABASE_URL") ? { DATABASE_URL: "postgres://svc@db/costs" } : {};
const value = (config: Config, key: string) => (config as unknown as Record<string, unknown>)[key];
const WITH_FLAG = SETTINGS.filter((s) => s.flag);

describe("where a setting comes from", () => {
  test.each(WITH_FLAG.map((s) => [s.flag, s] as const))("--%s wins over its environment variable", (_, s) => {
    const [fromEnv, fromFlag] = samples(s);
    const config = loadConfig([`--${s.flag}=${fromFlag}`], { ...partnerOf(s), [s.env]: fromEnv });
    expect(value(config, s.key)).toEqual(parsed(s, fromFlag));
  });

  test.each(SETTINGS.map((s) => [s.env, s] as const))("%s is read from the environment when no flag is given", (_, s) => {
    const [fromEnv] = samples(s);
    expect(value(loadConfig([], { ...partnerOf(s), [s.env]: fromEnv }), s.key)).toEqual(parsed(s, fromEnv));
  });

  test("with neither, every setting has its documented default", () => {
    const config = loadConfig([], {});
    for (const s of SETTINGS) expect([s.key, value(config, s.key)]).toEqual([s.key, s.default]);
  });

  test("--name=value, --name value and a bare boolean flag are the same", () => {
    expect(loadConfig(["--port=9000"], {}).port).toBe(9000);
    expect(loadConfig(["--port", "9000"], {}).port).toBe(9000);
    const bool = WITH_FLAG.find((s) => s.kind === "bool")!;
    expect(value(loadConfig([`--${bool.flag}`], { [bool.env]: "false" }), bool.key)).toBe(true);
  });

  test("boolean flags take true/false (yes/no, on/off, 1/0) as the next argument or after =", () => {
    for (const argv of [["--metrics-enabled", "false"], ["--metrics-enabled=false"], ["--metrics-enabled", "off"], ["--metrics-enabled", "0"]]) {
      expect([argv, loadConfig(argv, {}).metricsEnabled]).toEqual([argv, false]);
    }
    expect(loadConfig(["--metrics-enabled", "--port", "9000"], { METRICS_ENABLED: "false" })).toMatchObject({ metricsEnabled: true, port: 9000 });
  });

  test("REFRESH_DATABASE_URL: from the variable, its file or the systemd credential refresh-database-url; only beside DATABASE_URL", () => {
    const base = { DATABASE_URL: "postgres://svc@db/costs" };
    const file = fileWith("refresh-url-file", "postgres://owner:secret@file-host/db\n");
    expect(loadConfig([], { ...base, REFRESH_DATABASE_URL_FILE: file }).refreshDatabaseUrl).toBe("postgres://owner:secret@file-host/db");
    const credentials = join(work, "refresh-credentials");
    mkdirSync(credentials, { recursive: true });
    writeFileSync(join(credentials, "refresh-database-url"), "postgres://owner:secret@credential-host/db\n");
    expect(loadConfig([], { ...base, CREDENTIALS_DIRECTORY: credentials }).refreshDatabaseUrl).toBe("postgres://owner:secret@credential-host/db");
    expect(loadConfig([], { ...base, CREDENTIALS_DIRECTORY: credentials, REFRESH_DATABASE_URL: "postgres://owner@env/db" }).refreshDatabaseUrl).toBe("postgres://owner@env/db");
    expect(loadConfig([], base)).toMatchObject({ refreshDatabaseUrl: undefined, refreshIntervalS: 60 });
    // Not a setting of the commands that write anyway, nor of the embedded database.
    expect(() => loadConfig([], { REFRESH_DATABASE_URL: "postgres://owner@db/costs" })).toThrow(
      new ConfigError("REFRESH_DATABASE_URL needs DATABASE_URL: the service refreshes the PostgreSQL it reads"),
    );
    expect(() => loadConfig([], { ...base, REFRESH_DATABASE_URL: "mysql://x/y" })).toThrow(/^REFRESH_DATABASE_URL: /);
    expect(() => loadConfig(["--refresh-database-url", "postgres://o@db/c"], base, "migrate")).toThrow("--refresh-database-url is a setting of serve, not of migrate");
  });

  test("DATABASE_URL_FILE holds the DATABASE_URL on one line; the systemd credential database-url is the fallback", () => {
    const file = fileWith("url-file", "  postgres://u:secret@file-host/db\n");
    expect(loadConfig([], { DATABASE_URL_FILE: file }).databaseUrl).toBe("postgres://u:secret@file-host/db");
    const credentials = join(work, "credentials");
    mkdirSync(credentials, { recursive: true });
    writeFileSync(join(credentials, "database-url"), "postgres://u:secret@credential-host/db\n");
    expect(loadConfig([], { CREDENTIALS_DIRECTORY: credentials }).databaseUrl).toBe("postgres://u:secret@credential-host/db");
    // An explicit DATABASE_URL_FILE or DATABASE_URL wins over the credential.
    expect(loadConfig([], { CREDENTIALS_DIRECTORY: credentials, DATABASE_URL_FILE: file }).databaseUrl).toBe("postgres://u:secret@file-host/db");
    expect(loadConfig([], { CREDENTIALS_DIRECTORY: credentials, DATABASE_URL: "postgres://env/db" }).databaseUrl).toBe("postgres://env/db");
    // A directory without the credential: no database from it.
    expect(loadConfig([], { CREDENTIALS_DIRECTORY: work }).databaseUrl).toBeUndefined();
  });

  test.each([
    [{ DATABASE_URL: "postgres://a/b", DATABASE_URL_FILE: "/x" }, "DATABASE_URL and DATABASE_URL_FILE are both set: keep one"],
    [{ DATABASE_URL_FILE: "/nonexistent/url" }, "cannot read DATABASE_URL_FILE /nonexistent/url: ENOENT"],
    [{ DATABASE_URL_FILE: "EMPTY" }, "DATABASE_URL_FILE EMPTY is empty"],
    [{ DATABASE_URL_FILE: "BAD" }, "DATABASE_URL_FILE BAD: sslmode=nope is not one of disable, allow, prefer, require, verify-ca, verify-full (expected postgres://user:password@host:5432/database)"],
  ])("%j is rejected: %s", (env, message) => {
    const files: Record<string, string> = { EMPTY: fileWith("empty", "\n"), BAD: fileWith("bad", "postgres://u:secret@h/x?sslmode=nope") };
    const resolved = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, files[v] ?? v]));
    expect(() => loadConfig([], resolved)).toThrow(new ConfigError(message.replace("EMPTY", files.EMPTY!).replace("BAD", files.BAD!)));
  });

  test("an empty environment variable counts as unset", () => {
    expect(loadConfig([], { PORT: "", HOST: "", LOG_LEVEL: "" })).toMatchObject({ port: 8080, host: "0.0.0.0", logLevel: "info" });
  });

  test("CREDENTIALS_DIRECTORY (set by systemd's LoadCredential=) is picked up", () => {
    expect(loadConfig([], { CREDENTIALS_DIRECTORY: "/run/credentials/x.service" }).credentialsDirectory).toBe("/run/credentials/x.service");
  });

  test("the API keys have no flag, so they never show in the process list", () => {
    expect(SETTINGS.find((s) => s.env === "PRODUCT_COST_API_KEYS")).toMatchObject({ flag: "", secret: true });
    expect(() => loadConfig(["--api-keys=k"], {})).toThrow(new ConfigError("unknown flag --api-keys (see --help)"));
  });

  test("the result is frozen", () => {
    expect(Object.isFrozen(loadConfig([], {}))).toBe(true);
  });
});

describe("bad configuration", () => {
  test.each([
    [["--port", "70000"], {}, "--port must be between 0 and 65535, got 70000"],
    [[], { PORT: "-1" }, 'PORT must be a whole number, got "-1"'],
    [[], { LOG_FORMAT: "xml" }, 'LOG_FORMAT must be one of json, pretty, got "xml"'],
    [["--host"], {}, "flag --host needs a value"],
    [["serve"], {}, 'unexpected argument "serve" (see --help)'],
    [[], { TLS_KEY_FILE: "/k.pem" }, "TLS_CERT_FILE and TLS_KEY_FILE must be set together"],
    [[], { DATABASE_URL: "http://db:5432/x" }, "DATABASE_URL: must start with postgres:// or postgresql:// (expected postgres://user:password@host:5432/database)"],
    [["--database-url", "not a url"], {}, "--database-url: must start with postgres:// or postgresql:// (expected postgres://user:password@host:5432/database)"],
    [[], { DATABASE_URL: "postgres://user:s3cret@host:port/db" }, 'DATABASE_URL: port "port" is not a number from 1 to 65535 (expected postgres://user:password@host:5432/database)'],
    [[], { DATABASE_URL: "postgres://db/x?sslmode=bogus" }, "DATABASE_URL: sslmode=bogus is not one of disable, allow, prefer, require, verify-ca, verify-full (expected postgres://user:password@host:5432/database)"],
    [[], { DATABASE_URL: "postgres://db/x?sslmode=verify-full&sslrootcert=/nonexistent/root.crt" }, "DATABASE_URL: sslrootcert /nonexistent/root.crt cannot be read: ENOENT"],
  ] as const)("%j %j is rejected", (argv, env, message) => {
    expect(() => loadConfig(argv, env)).toThrow(new ConfigError(message));
  });

  test("every problem is reported at once, in one message", () => {
    expect(() => loadConfig(["--port", "x", "--log-level", "loud"], { TLS_CERT_FILE: "/c.pem" })).toThrow(
      new ConfigError(
        '--port must be a whole number, got "x"; --log-level must be one of debug, info, warn, error, got "loud"; ' +
          "TLS_CERT_FILE and TLS_KEY_FILE must be set together",
      ),
    );
  });

  test("a malformed DATABASE_URL is reported without echoing it (it may hold a password)", () => {
    let thrown: unknown;
    try {
      loadConfig([], { DATABASE_URL: "postgres://user:s3cret@host:port/db" });
    } catch (err) {
      thrown = err;
    }
    // An accepted URL leaves `thrown` undefined and fails here.
    expect(thrown).toBeInstanceOf(ConfigError);
    expect((thrown as Error).message).toBe('DATABASE_URL: port "port" is not a number from 1 to 65535 (expected postgres://user:password@host:5432/database)');
    expect((thrown as Error).message).not.toContain("s3cret");
  });
});

describe("help", () => {
  test("each command's help lists exactly the settings it reads, with flag, variable and default", () => {
    for (const command of COMMANDS) {
      const help = commandHelp(command).split("\n");
      for (const s of SETTINGS) {
        const flag = s.flag ? `--${s.flag}` : "(environment only)";
        const line = help.find((l) => l.trimStart().startsWith(flag + " ") && l.includes(` ${s.env} `));
        const expected = settingsOf(command.name).includes(s) ? `default: ${s.default ?? "unset"}` : undefined;
        expect([command.name, s.env, line?.trimEnd().match(/default: \S+$/)?.[0]]).toEqual([command.name, s.env, expected]);
      }
    }
  });

  test("a command that reads no settings says so, and shows only its own flags", () => {
    const help = commandHelp(commandNamed("generate-key")!);
    expect(help).toContain("--label <name>");
    expect(help).toContain("It reads no settings.");
    expect(help).not.toContain("DATABASE_URL");
  });

  test("load-csv's help lists the columns of each table", () => {
    const help = commandHelp(commandNamed("load-csv")!);
    expect(help).toContain("  products: product_id, erp_product_id, erp_sku, product_name, is_sample (key: product_id; required: product_id)");
    expect(help).toContain(
      "  product_daily_costs: product_id, cost_date, purchase_cost_usd, inbound_freight_usd, shipping_to_customer_usd, warehouse_fees_usd (key: product_id, cost_date; required: product_id, cost_date)",
    );
  });

  test("the overview names every command, and the exit codes", () => {
    const help = overviewHelp();
    for (const c of COMMANDS) expect(help).toContain(`\n  ${c.name} `);
    expect(help).toContain("Exit codes: 0 done (or stopped cleanly), 1 unexpected failure, 2 bad configuration or usage");
  });
});

describe("settings belong to commands", () => {
  const database = { DATABASE_URL: "postgres://h/db" };
  test.each([
    ["migrate --port 80", "--port is a setting of serve, not of migrate (see migrate --help)"],
    ["hash-key --log-level debug", "--log-level is a setting of serve, migrate, refresh, load-csv, not of hash-key (see hash-key --help)"],
  ])("%s: a setting of another command is refused, naming whose it is", (line, message) => {
    const [command, ...argv] = line.split(" ");
    expect(() => readCommandLine(argv, database, commandNamed(command!))).toThrow(new ConfigError(message));
  });

  test("a variable of another command is ignored, even when it would be invalid there", () => {
    const config = readCommandLine([], { PORT: "not-a-port", ...database }, commandNamed("migrate")).config;
    expect(config.port).toBe(8080);
    expect(config.databaseUrl).toBe("postgres://h/db");
  });

  test("a command that reads no settings reads no variable, not even a database's", () => {
    const config = readCommandLine([], { PORT: "not-a-port", DATABASE_URL: "mysql://x" }, commandNamed("stage-files")).config;
    expect([config.port, config.databaseUrl]).toEqual([8080, undefined]);
  });

  test("a command's own flags (with their defaults) and arguments come back apart from its settings", () => {
    const line = readCommandLine(["products", "--replace=false", "f.csv", "--log-level", "warn"], database, commandNamed("load-csv"));
    expect([line.args, [...line.own], line.config.logLevel]).toEqual([["products", "f.csv"], [["replace", "false"]], "warn"]);
    expect(readCommandLine([], {}, commandNamed("systemd-unit")).own.get("exec-path")).toBe("/usr/local/bin/product-cost-export");
  });

  test.each([
    ["products f.csv --replace=maybe", '--replace must be true or false, got "maybe"'],
    ["products f.csv three", 'unexpected argument "three" (see load-csv --help)'],
    ["costs f.csv", 'load-csv loads into one of: products, product_daily_costs (not "costs")'],
    ["products", "load-csv needs <products|product_daily_costs> <file.csv|-> (see load-csv --help)"],
  ])("load-csv %s is refused: %s", (args, message) => {
    expect(() => readCommandLine(args.split(" "), database, commandNamed("load-csv"))).toThrow(new ConfigError(message));
  });

  test.each(["migrate", "refresh", "load-csv products f.csv"])("%s without DATABASE_URL or --data-dir is refused: the in-memory database would be gone at exit", (line) => {
    const [command, ...argv] = line.split(" ");
    expect(() => readCommandLine(argv, {}, commandNamed(command!))).toThrow(
      new ConfigError(`${command} needs a database to change: set DATABASE_URL or --data-dir`),
    );
  });
});

test("serve refuses target_session_attrs=read-write (its sessions are read-only: nothing would match); migrate takes it", () => {
  const url = "postgres://svc@db1,db2/costs?target_session_attrs=read-write";
  expect(() => loadConfig([], { DATABASE_URL: url })).toThrow(
    new ConfigError("DATABASE_URL: target_session_attrs=read-write never matches the service's read-only sessions; use target_session_attrs=primary to read from the primary"),
  );
  expect(loadConfig([], { DATABASE_URL: url }, "migrate").databaseUrl).toBe(url);
  // However it is written: the parsed value counts, not the text.
  expect(() => loadConfig([], { DATABASE_URL: "postgres://svc@db1/costs?target_session_attrs=read%2Dwrite" })).toThrow(ConfigError);
});

describe("the listen address", () => {
  test.each(["0.0.0.0", "127.0.0.1", "::", "::1", "[::1]", "localhost", "api.internal.example", "host-1"])("%s is accepted", (host) => {
    expect(loadConfig(["--host", host], {}).host).toBe(host);
  });
  test.each(["a b", "999.1.1.1", "exa_mple", "-x", "[::1", "host:80", ""])("%p is a configuration error", (host) => {
    if (host === "") {
      // An empty value means "not set": the default.
      expect(loadConfig([], { HOST: "" }).host).toBe("0.0.0.0");
      return;
    }
    expect(() => loadConfig([`--host=${host}`], {})).toThrow(
      new ConfigError(`--host must be an IP address or a host name of this machine (0.0.0.0: every interface; 127.0.0.1: this machine only), got ${JSON.stringify(host)}`),
    );
  });
});
