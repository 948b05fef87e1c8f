// Every setting of the service, read once from the environment and the command line's
// flags (cli/command-line.ts splits the line) into a frozen Config whose type comes from
// the same table. A flag wins over its environment variable. All problems are collected
// and reported together as one ConfigError: one line on stderr and exit code 2.

import { existsSync } from "node:fs";
import { isIP } from "node:net";
import { join } from "node:path";
import { DatabaseUrlError, parseDatabaseUrl, type DatabaseTarget } from "./database-url.ts";
import { fileProblem, readOperatorFile } from "./operator-file.ts";
import { parseTrustedProxies } from "./trusted-proxies.ts";
import { parseCorsOrigins } from "./cors-origins.ts";
import { copyOf } from "../ops/units.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

type Kind = "string" | "int" | "bool" | "enum";

/** The commands that read settings; the others (hash-key, systemd-unit, ...) take none. */
type SettingsCommand = "serve" | "migrate" | "refresh" | "load-csv" | "list-keys";
const SERVE: readonly SettingsCommand[] = ["serve"];
const KEY_COMMANDS: readonly SettingsCommand[] = ["serve", "list-keys"];
const DATABASE_COMMANDS: readonly SettingsCommand[] = ["serve", "migrate", "refresh", "load-csv"];

export interface SettingSpec {
  key: string; // property name in Config
  /** The commands that use it: a flag of another command is refused, its variable ignored. */
  commands: readonly SettingsCommand[];
  env: string;
  flag: string; // without the leading --
  kind: Kind;
  default: string | number | boolean | undefined;
  choices?: readonly string[];
  min?: number;
  max?: number;
  secret?: boolean; // never printed, never accepted as a flag (would show in `ps`)
  help: string;
}

/**
 * Mozilla's "intermediate" TLS 1.2 suites (ssl-config.mozilla.org, guidelines 5.7), without
 * its DHE ones: ECDHE for forward secrecy, AEAD only (no CBC, no SHA-1 MAC).
 */
export const INTERMEDIATE_CIPHERS = [
  "ECDHE-ECDSA-AES128-GCM-SHA256",
  "ECDHE-RSA-AES128-GCM-SHA256",
  "ECDHE-ECDSA-AES256-GCM-SHA384",
  "ECDHE-RSA-AES256-GCM-SHA384",
  "ECDHE-ECDSA-CHACHA20-POLY1305",
  "ECDHE-RSA-CHACHA20-POLY1305",
].join(":");

// One table drives parsing, the Config type, --help and the README's configuration section.
export const SETTINGS = [
  { key: "databaseUrl", commands: DATABASE_COMMANDS, env: "DATABASE_URL", flag: "database-url", kind: "string", default: undefined,
    help: "PostgreSQL to read (postgres://user:pass@host:5432/db; percent-encode % / ? # in the password). Wins over the database-url credential. Unset: the embedded PostgreSQL (in DATA_DIR; serve alone may run it in memory)." },
  { key: "databaseUrlFile", commands: DATABASE_COMMANDS, env: "DATABASE_URL_FILE", flag: "database-url-file", kind: "string", default: undefined,
    help: "File holding the DATABASE_URL (one line), so the password need not be in the environment. Under the packaged unit: put the URL alone in /etc/product-cost-export/database-url instead." },
  { key: "dataDir", commands: DATABASE_COMMANDS, env: "DATA_DIR", flag: "data-dir", kind: "string", default: undefined,
    help: "Embedded database only: keep it in this directory instead of in memory." },
  { key: "demoData", commands: SERVE, env: "DEMO_DATA", flag: "demo-data", kind: "bool", default: undefined,
    help: "Embedded database only: serve the demo dataset (made-up costs; every answer then says X-Demo-Data: true). Unset: on in memory when run by hand, an error under systemd (set DATABASE_URL or DATA_DIR); false: never." },
  { key: "apiKeys", commands: KEY_COMMANDS, env: "PRODUCT_COST_API_KEYS", flag: "", kind: "string", default: undefined, secret: true,
    help: "Comma-separated API keys; an entry sha256:<64 hex> is the digest of a key." },
  { key: "apiKeysFile", commands: KEY_COMMANDS, env: "PRODUCT_COST_API_KEYS_FILE", flag: "api-keys-file", kind: "string", default: undefined,
    help: "File with one key or sha256:<hex> digest per line, each optionally with expires=<date>, rate=<per minute> and # label (# comments). Re-read on SIGHUP." },
  { key: "trustedProxies", commands: SERVE, env: "TRUSTED_PROXIES", flag: "trusted-proxies", kind: "string", default: undefined,
    help: "Comma-separated addresses or CIDR ranges of reverse proxies (10.0.0.0/8, ::1): for requests from them, the logged client address is the one they put in X-Forwarded-For. Unset: the peer's own address." },
  { key: "corsAllowedOrigins", commands: SERVE, env: "CORS_ALLOWED_ORIGINS", flag: "cors-allowed-origins", kind: "string", default: undefined,
    help: "Comma-separated origins of browser pages on other origins that may read the API (https://dash.example.com), or * for any. Unset: no CORS (a browser refuses cross-origin reads)." },
  { key: "docsEnabled", commands: SERVE, env: "DOCS_ENABLED", flag: "docs-enabled", kind: "bool", default: true,
    help: "Serve /docs (Swagger UI) and /openapi.json, without a key. false: both answer 404." },
  { key: "host", commands: SERVE, env: "HOST", flag: "host", kind: "string", default: "0.0.0.0", help: "Listen address." },
  { key: "port", commands: SERVE, env: "PORT", flag: "port", kind: "int", default: 8080, min: 0, max: 65535, help: "Listen port." },
  { key: "monitoringPort", commands: SERVE, env: "MONITORING_PORT", flag: "monitoring-port", kind: "int", default: 0, min: 0, max: 65535,
    help: "A second listener, plain HTTP, for /healthz, /readyz, /metrics, /docs and /openapi.json, which the API's listener then answers 404. 0: none, all on the API's listener." },
  { key: "monitoringHost", commands: SERVE, env: "MONITORING_HOST", flag: "monitoring-host", kind: "string", default: "127.0.0.1", help: "Listen address of MONITORING_PORT." },
  { key: "tlsCertFile", commands: SERVE, env: "TLS_CERT_FILE", flag: "tls-cert-file", kind: "string", default: undefined,
    help: "PEM certificate (chain). With TLS_KEY_FILE: serve HTTPS." },
  { key: "tlsKeyFile", commands: SERVE, env: "TLS_KEY_FILE", flag: "tls-key-file", kind: "string", default: undefined,
    help: "PEM private key for TLS_CERT_FILE." },
  { key: "tlsCiphers", commands: SERVE, env: "TLS_CIPHERS", flag: "tls-ciphers", kind: "string", default: undefined,
    help: "TLS 1.2 cipher suites (OpenSSL list, colon-separated). Unset: Mozilla's intermediate profile, ECDHE with AES-GCM or ChaCha20-Poly1305 only (forward secrecy, no CBC). TLS 1.3 is always on with its own suites; TLS 1.1 and older never." },
  { key: "hstsMaxAge", commands: SERVE, env: "HSTS_MAX_AGE", flag: "hsts-max-age", kind: "int", default: 31536000, min: 0, max: 63072000,
    help: "With TLS: every answer says Strict-Transport-Security: max-age=<this> (seconds), so browsers use HTTPS only. 0 = not sent." },
  { key: "dbPoolMax", commands: SERVE, env: "DB_POOL_MAX", flag: "db-pool-max", kind: "int", default: 10, min: 1, max: 1000,
    help: "Most connections to an external PostgreSQL." },
  { key: "dbConnectTimeoutMs", commands: DATABASE_COMMANDS, env: "DB_CONNECT_TIMEOUT_MS", flag: "db-connect-timeout-ms", kind: "int", default: 5000,
    min: 100, max: 600000, help: "Time allowed to open a database connection, or to hear from one that went silent." },
  { key: "statementTimeoutMs", commands: ["serve", "load-csv"], env: "STATEMENT_TIMEOUT_MS", flag: "statement-timeout-ms", kind: "int", default: 30000,
    min: 100, max: 3600000, help: "Longest a query may run; past it: 503 DATABASE_UNAVAILABLE and the query is cancelled." },
  { key: "requestTimeoutMs", commands: SERVE, env: "REQUEST_TIMEOUT_MS", flag: "request-timeout-ms", kind: "int", default: 120000,
    min: 0, max: 86400000,
    help: "Longest a request may take from arrival to its last byte; past it: 503 DATABASE_UNAVAILABLE, or the transfer is aborted if the body has started. 0 = no limit." },
  { key: "requestQueueMax", commands: SERVE, env: "REQUEST_QUEUE_MAX", flag: "request-queue-max", kind: "int", default: 100, min: 0, max: 100000,
    help: "Requests that may wait for a database connection when DB_POOL_MAX reads run; more: 503 OVERLOADED with Retry-After." },
  { key: "requestQueueTimeoutMs", commands: SERVE, env: "REQUEST_QUEUE_TIMEOUT_MS", flag: "request-queue-timeout-ms", kind: "int", default: 10000,
    min: 0, max: 600000, help: "Longest a request waits for a database connection; longer: 503 OVERLOADED with Retry-After." },
  { key: "responseBufferMb", commands: SERVE, env: "RESPONSE_BUFFER_MB", flag: "response-buffer-mb", kind: "int", default: 128, min: 0, max: 65536,
    help: "Memory (MiB, all answers together) for answers read ahead of slow clients, so a slow client holds memory, not a database connection. One answer takes at most a quarter. 0 = answers stream at each client's pace." },
  { key: "answerCacheMb", commands: SERVE, env: "ANSWER_CACHE_MB", flag: "answer-cache-mb", kind: "int", default: 256, min: 0, max: 65536,
    help: "Room (MiB) for whole answers kept for their data's version, in unnamed files under TMPDIR (the page cache, not the heap): a repeated request is answered from there (br and gzip made once), least recently used first out; one answer takes at most a quarter. 0 = none (ETags and 304s still work)." },
  { key: "edgeCacheMb", commands: SERVE, env: "EDGE_CACHE_MB", flag: "edge-cache-mb", kind: "int", default: 128, min: 0, max: 65536,
    help: "Memory (MiB) for what reads of ranges keep for the next: the products in the answers' order, and every product's totals through a day (an edge; about 52 bytes a product), each under the version of the data it was read at. A range with both edges held costs arithmetic and its bytes; one with an edge or more not held is read by its one statement, and its edges are then read in the background when no request is reading. Least recently used first out. 0 = none: every range by its statement." },
  { key: "rateLimitPerMinute", commands: KEY_COMMANDS, env: "RATE_LIMIT_PER_MINUTE", flag: "rate-limit-per-minute", kind: "int", default: 0, min: 0, max: 1000000,
    help: "Requests per minute per API key (bursts up to the same number); more: 429 RATE_LIMITED with Retry-After. 0 = no limit." },
  { key: "maxRangeDays", commands: SERVE, env: "MAX_RANGE_DAYS", flag: "max-range-days", kind: "int", default: 0, min: 0, max: 10000000,
    help: "Longest date range in days (inclusive); longer: 400 INVALID_MONTH_RANGE. 0 = no limit." },
  { key: "shutdownTimeoutMs", commands: SERVE, env: "SHUTDOWN_TIMEOUT_MS", flag: "shutdown-timeout-ms", kind: "int", default: 10000,
    min: 0, max: 600000, help: "On SIGTERM/SIGINT, how long requests in flight may take to finish." },
  { key: "logLevel", commands: DATABASE_COMMANDS, env: "LOG_LEVEL", flag: "log-level", kind: "enum", default: "info",
    choices: ["debug", "info", "warn", "error"], help: "Least severe log level written." },
  { key: "logFormat", commands: DATABASE_COMMANDS, env: "LOG_FORMAT", flag: "log-format", kind: "enum", default: "json",
    choices: ["json", "pretty"], help: "json: one JSON object per line; pretty: readable text for a terminal." },
  { key: "metricsEnabled", commands: SERVE, env: "METRICS_ENABLED", flag: "metrics-enabled", kind: "bool", default: true,
    help: "Serve GET /metrics (Prometheus text format, no key: restrict it at the network). false: /metrics answers 404." },
  { key: "refreshDatabaseUrl", commands: SERVE, env: "REFRESH_DATABASE_URL", flag: "refresh-database-url", kind: "string", default: undefined,
    help: "A URL of the tables' owner: the service then folds writers' changes into the rollup itself, every REFRESH_INTERVAL_S (instead of the refresh timer; instances take turns). Its reads stay on DATABASE_URL's read-only sessions. Unset: the timer's job." },
  { key: "refreshDatabaseUrlFile", commands: SERVE, env: "REFRESH_DATABASE_URL_FILE", flag: "refresh-database-url-file", kind: "string", default: undefined,
    help: "File holding the REFRESH_DATABASE_URL. Under the packaged unit: /etc/product-cost-export/refresh-database-url." },
  { key: "refreshIntervalS", commands: SERVE, env: "REFRESH_INTERVAL_S", flag: "refresh-interval-s", kind: "int", default: 60, min: 1, max: 86400,
    help: "With REFRESH_DATABASE_URL: seconds between the service's refreshes." },
] as const satisfies readonly SettingSpec[];

type Setting = (typeof SETTINGS)[number];
type ValueOf<S> = S extends { kind: "int" } ? number : S extends { kind: "bool" } ? boolean : S extends { choices: readonly (infer C)[] } ? C : string;
/** Each setting's value: undefined when it has no default and is not set. */
export type Config = { readonly [S in Setting as S["key"]]: ValueOf<S> | (S["default"] extends undefined ? undefined : never) } & {
  /** systemd's LoadCredential= directory, if the service runs under systemd. */
  readonly credentialsDirectory: string | undefined;
};

function parseValue(spec: SettingSpec, raw: string, source: string, problems: string[]): unknown {
  switch (spec.kind) {
    case "string":
      return raw === "" ? undefined : raw;
    case "int": {
      if (!/^\d+$/.test(raw)) {
        problems.push(`${source} must be a whole number, got ${JSON.stringify(raw)}`);
        return undefined;
      }
      const n = Number(raw);
      if ((spec.min !== undefined && n < spec.min) || (spec.max !== undefined && n > spec.max)) {
        problems.push(`${source} must be between ${spec.min} and ${spec.max}, got ${raw}`);
        return undefined;
      }
      return n;
    }
    case "bool": {
      const on = boolOf(raw);
      if (on === undefined) problems.push(`${source} must be true or false, got ${JSON.stringify(raw)}`);
      return on;
    }
    case "enum":
      if (!spec.choices!.includes(raw)) {
        problems.push(`${source} must be one of ${spec.choices!.join(", ")}, got ${JSON.stringify(raw)}`);
        return undefined;
      }
      return raw;
  }
}

const TRUE_WORDS = ["1", "true", "yes", "on"];
const FALSE_WORDS = ["0", "false", "no", "off"];

/** true, false, or undefined for a word that is neither (any case). */
export function boolOf(raw: string): boolean | undefined {
  const v = raw.toLowerCase();
  return TRUE_WORDS.includes(v) ? true : FALSE_WORDS.includes(v) ? false : undefined;
}

/** The settings a command reads; none for most (hash-key, systemd-unit, ...). */
export function settingsOf(command: string): SettingSpec[] {
  return SETTINGS.filter((s) => (s.commands as readonly string[]).includes(command));
}

/**
 * The settings `command` reads, from its setting flags (`flags`: by flag name, as given) and
 * the environment; a variable of another command is ignored, so one environment file serves
 * them all. Every other setting keeps its default. Problems are added to `problems`.
 */
export function readSettings(command: string, flags: ReadonlyMap<string, string>, env: Record<string, string | undefined>, problems: string[]): Config {
  const reads = settingsOf(command);
  const out: Record<string, unknown> = { credentialsDirectory: env.CREDENTIALS_DIRECTORY || undefined };
  for (const spec of SETTINGS) {
    const fromFlag = spec.flag ? flags.get(spec.flag) : undefined;
    const fromEnv = reads.includes(spec) ? env[spec.env] : undefined;
    let value: unknown;
    if (fromFlag !== undefined) value = parseValue(spec, fromFlag, `--${spec.flag}`, problems);
    else if (fromEnv !== undefined && fromEnv !== "") value = parseValue(spec, fromEnv, spec.env, problems);
    out[spec.key] = value ?? spec.default;
  }

  // A problem names a setting by its flag when it was given, else by its variable.
  const sourceOf = (key: string) => {
    const spec = SETTINGS.find((s) => s.key === key)!;
    return flags.has(spec.flag) ? `--${spec.flag}` : spec.env;
  };
  const database = reads.some((s) => s.key === "databaseUrl")
    ? databaseUrlOf(out, "databaseUrl", sourceOf("databaseUrl"), problems)
    : undefined;
  let target: DatabaseTarget | undefined;
  if (database) {
    out.databaseUrl = database.url;
    target = checkDatabaseUrl(database.url, database.source, problems);
  }
  if (command === "serve") {
    // Serving sessions are read-only (default_transaction_read_only), so a server never
    // looks read-write to them: the pool would wait for a host that cannot come.
    if (database && target?.targetSessionAttrs === "read-write") {
      problems.push(`${database.source}: target_session_attrs=read-write never matches the service's read-only sessions; use target_session_attrs=primary to read from the primary`);
    }
    if ((out.tlsCertFile === undefined) !== (out.tlsKeyFile === undefined)) {
      problems.push("TLS_CERT_FILE and TLS_KEY_FILE must be set together");
    }
    const proxies = out.trustedProxies === undefined ? undefined : parseTrustedProxies(out.trustedProxies as string).problem;
    if (proxies) problems.push(`${sourceOf("trustedProxies")}: ${proxies}`);
    if (out.corsAllowedOrigins !== undefined) for (const p of parseCorsOrigins(out.corsAllowedOrigins as string).problems) problems.push(`${sourceOf("corsAllowedOrigins")} ${p}`);
    const hostProblem = checkListenHost(out.host as string);
    if (hostProblem) problems.push(`${sourceOf("host")} ${hostProblem}`);
    const refresh = databaseUrlOf(out, "refreshDatabaseUrl", sourceOf("refreshDatabaseUrl"), problems);
    if (refresh) {
      out.refreshDatabaseUrl = refresh.url;
      checkDatabaseUrl(refresh.url, refresh.source, problems);
      // The embedded database refreshes when it is written (load-csv): nothing to fold here.
      if (!database) problems.push(`${refresh.source} needs DATABASE_URL: the service refreshes the PostgreSQL it reads`);
    }
  }
  // The loop above set every key of SETTINGS, the table Config's type is made from.
  return Object.freeze(out) as Config;
}

const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** Why a listen address cannot be one, or undefined: an IPv4 or IPv6 address (bracketed or not), or a host name. */
export function checkListenHost(host: string): string | undefined {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  // All digits and dots is an IPv4 address or nothing (999.1.1.1 is no host name).
  if (isIP(bare) || (HOST_NAME.test(host) && !/^[\d.]+$/.test(host))) return undefined;
  return `must be an IP address or a host name of this machine (0.0.0.0: every interface; 127.0.0.1: this machine only), got ${JSON.stringify(host)}`;
}

/** The systemd credential that holds the DATABASE_URL (LoadCredential=database-url:<file>). */
export const DATABASE_URL_CREDENTIAL = "database-url";
/** The systemd credential that holds the REFRESH_DATABASE_URL. */
export const REFRESH_DATABASE_URL_CREDENTIAL = "refresh-database-url";

const CREDENTIALS = { databaseUrl: DATABASE_URL_CREDENTIAL, refreshDatabaseUrl: REFRESH_DATABASE_URL_CREDENTIAL };

/**
 * A database URL and where it came from: the flag or variable (`source`); else its _FILE
 * setting (`key` + File); else its systemd credential. A file holds one line (surrounding
 * whitespace ignored).
 */
function databaseUrlOf(out: Record<string, unknown>, key: keyof typeof CREDENTIALS, source: string, problems: string[]): { url: string; source: string } | undefined {
  const file = out[`${key}File`] as string | undefined;
  const fileEnv = SETTINGS.find((s) => s.key === `${key}File`)!.env;
  if (out[key] !== undefined) {
    if (file !== undefined) problems.push(`${source} and ${fileEnv} are both set: keep one`);
    return { url: out[key] as string, source };
  }
  const name = CREDENTIALS[key];
  const credential = out.credentialsDirectory ? join(out.credentialsDirectory as string, name) : undefined;
  const [path, what] = file !== undefined ? [file, `${fileEnv} ${file}`] : credential && existsSync(credential) ? [credential, `the systemd credential ${name}`] : [];
  if (!path) return undefined;
  try {
    const url = readOperatorFile(path).content.toString("utf8").trim();
    if (url) return { url, source: what! };
    problems.push(`${what} is empty`);
  } catch (err) {
    problems.push(`cannot read ${what}: ${fileProblem(err)}${copyOf(path)}`);
  }
  return undefined;
}

// The URL itself is never echoed: it may hold a password.
function checkDatabaseUrl(url: string, source: string, problems: string[]): DatabaseTarget | undefined {
  try {
    return parseDatabaseUrl(url);
  } catch (err) {
    if (!(err instanceof DatabaseUrlError)) throw err;
    // The shape is named only when it is the shape that is wrong (not a file the URL names).
    problems.push(`${source}: ${err.message}${err.malformed ? " (expected postgres://user:password@host:5432/database)" : ""}`);
    return undefined;
  }
}

/** Every setting at its default: what a part of the service given no configuration assumes. */
export const DEFAULTS: Config = readSettings("", new Map(), {}, []);
