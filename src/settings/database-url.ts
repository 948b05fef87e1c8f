// DATABASE_URL as operators write it: a libpq connection URI
// (https://www.postgresql.org/docs/current/libpq-connect.html#LIBPQ-CONNSTRING-URIS), read
// here into explicit postgres.js options so that nothing in it reaches PostgreSQL as a
// setting by accident (postgres.js would send `?password=...` as a server parameter), with
// the same defaults as libpq where they matter: sslmode=prefer, and no host meaning the
// Unix socket in /var/run/postgresql.
//
//   postgres[ql]://[user[:password]@][host[:port][,host[:port]...]][/dbname][?param=value&...]
//
// Parameters: host, port, dbname, user, password, sslmode, sslrootcert, sslcert, sslkey,
// application_name, connect_timeout, target_session_attrs, options. Any other is refused
// (a configuration error), as libpq refuses what it does not know.

import { createSecureContext, type SecureContextOptions } from "node:tls";
import type postgres from "postgres";
import { CONFIG_DIRECTORY, copyOf, RUNTIME_DIRECTORY } from "../ops/units.ts";
import { fileProblem, readOperatorFile } from "./operator-file.ts";

/**
 * Where the packaged service (a dynamic user) can read each file: a CA certificate where every
 * user may read it; a client certificate and its private key copied for it from
 * CONFIG_DIRECTORY at each start (stage-files), readable by it alone.
 */
const READABLE_PLACE = {
  sslrootcert: "put it where every user may read it (/etc/ssl/certs)",
  sslcert: `put it in ${CONFIG_DIRECTORY}/db-client-cert.pem and name /run/${RUNTIME_DIRECTORY}/db-client-cert here`,
  sslkey: `put it in ${CONFIG_DIRECTORY}/db-client-key.pem and name /run/${RUNTIME_DIRECTORY}/db-client-key here`,
} as const;

export class DatabaseUrlError extends Error {
  override name = "DatabaseUrlError";
  /** false: the URL is well formed, and a file it names is the problem. */
  constructor(
    message: string,
    readonly malformed = true,
  ) {
    super(message);
  }
}

export const SSL_MODES = ["disable", "allow", "prefer", "require", "verify-ca", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];
export const TARGET_SESSION_ATTRS = ["any", "read-write", "read-only", "primary", "standby", "prefer-standby"] as const;
export type TargetSessionAttrs = (typeof TARGET_SESSION_ATTRS)[number];

const PARAMETERS = [
  "host", "port", "dbname", "user", "password", "sslmode", "sslrootcert", "sslcert", "sslkey",
  "application_name", "connect_timeout", "target_session_attrs", "options",
] as const;
type Parameter = (typeof PARAMETERS)[number];

/** libpq's default socket directory on Debian and most distributions. */
export const DEFAULT_SOCKET_DIRECTORY = "/var/run/postgresql";

export interface DatabaseTarget {
  /** TCP hosts, tried in order (a multi-host URI); or one socket directory (starts with "/"). */
  hosts: string[];
  ports: number[];
  database?: string;
  user?: string;
  password?: string;
  sslmode: SslMode;
  sslrootcert?: string;
  sslcert?: string;
  sslkey?: string;
  applicationName?: string;
  /** Seconds; overrides DB_CONNECT_TIMEOUT_MS when set (libpq's 0, "wait forever", is not: the service's own timeout applies). */
  connectTimeoutS?: number;
  targetSessionAttrs: TargetSessionAttrs;
  /** Server options for the session, as libpq's `options` (`-c name=value ...`). */
  options?: string;
}

function decode(text: string, what: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw new DatabaseUrlError(`${what} has a malformed %-escape`);
  }
}

function port(text: string): number {
  const n = /^\d{1,5}$/.test(text) ? Number(text) : NaN;
  if (!(n >= 1 && n <= 65535)) throw new DatabaseUrlError(`port ${JSON.stringify(text)} is not a number from 1 to 65535`);
  return n;
}

/** `host[:port]`, `[v6]:port` or empty, each of a comma-separated host list. */
function hostAndPort(spec: string): { host: string; port?: string } {
  if (spec.startsWith("[")) {
    const end = spec.indexOf("]");
    if (end < 0) throw new DatabaseUrlError(`host ${JSON.stringify(spec)} opens [ without closing it`);
    const rest = spec.slice(end + 1);
    if (rest && !rest.startsWith(":")) throw new DatabaseUrlError(`unexpected ${JSON.stringify(rest)} after the IPv6 address`);
    return { host: spec.slice(1, end), port: rest ? rest.slice(1) : undefined };
  }
  const colon = spec.lastIndexOf(":");
  return colon < 0 ? { host: spec } : { host: spec.slice(0, colon), port: spec.slice(colon + 1) };
}

/** A URI after its `scheme://`, `[user[:password]@]hostlist[/path][?query]`, in its parts, undecoded. */
function splitUrl(rest: string): { user?: string; password?: string; hostlist: string; path?: string; query?: string } {
  const q = rest.indexOf("?");
  const beforeQuery = q >= 0 ? rest.slice(0, q) : rest;
  const slash = beforeQuery.indexOf("/");
  const authority = slash >= 0 ? beforeQuery.slice(0, slash) : beforeQuery;
  const at = authority.lastIndexOf("@");
  const userinfo = at >= 0 ? authority.slice(0, at) : undefined;
  const colon = userinfo?.indexOf(":") ?? -1;
  return {
    user: colon >= 0 ? userinfo!.slice(0, colon) : userinfo,
    password: colon >= 0 ? userinfo!.slice(colon + 1) : undefined,
    hostlist: authority.slice(at + 1),
    path: slash >= 0 ? beforeQuery.slice(slash + 1) : undefined,
    query: q >= 0 ? rest.slice(q + 1) : undefined,
  };
}

function oneOf<T extends string>(allowed: readonly T[], value: string, name: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new DatabaseUrlError(`${name}=${value} is not one of ${allowed.join(", ")}`);
  return value as T;
}

/** Reads and checks a libpq connection URI. Throws DatabaseUrlError with a message that never contains the password. */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const scheme = /^(postgres|postgresql):\/\//i.exec(url);
  if (!scheme) throw new DatabaseUrlError("must start with postgres:// or postgresql://");
  const { user, password, hostlist, path, query } = splitUrl(url.slice(scheme[0].length));

  const target: DatabaseTarget = { hosts: [], ports: [], sslmode: "prefer", targetSessionAttrs: "any" };
  if (user !== undefined) target.user = decode(user, "the user name") || undefined;
  if (password !== undefined) target.password = decode(password, "the password");
  if (path) target.database = decode(path, "the database name");
  const specs = hostlist ? hostlist.split(",").map(hostAndPort) : [];
  let hosts = specs.map((s) => decode(s.host, "a host"));
  let ports = specs.map((s) => s.port);

  const seen = new Set<string>();
  for (const pair of query ? query.split("&") : []) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const name = decode(eq >= 0 ? pair.slice(0, eq) : pair, "a parameter name");
    const value = decode(eq >= 0 ? pair.slice(eq + 1) : "", `parameter ${name}`);
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      throw new DatabaseUrlError(`unsupported parameter ${JSON.stringify(name)} (supported: ${PARAMETERS.join(", ")})`);
    }
    if (seen.has(name)) throw new DatabaseUrlError(`parameter ${name} is given twice`);
    seen.add(name);
    switch (name as Parameter) {
      case "host": hosts = value.split(","); break;
      case "port": ports = value.split(","); break;
      case "dbname": target.database = value; break;
      case "user": target.user = value; break;
      case "password": target.password = value; break;
      case "sslmode": target.sslmode = oneOf(SSL_MODES, value, "sslmode"); break;
      case "sslrootcert": target.sslrootcert = value; break;
      case "sslcert": target.sslcert = value; break;
      case "sslkey": target.sslkey = value; break;
      case "application_name": target.applicationName = value; break;
      case "connect_timeout": {
        if (!/^\d+$/.test(value)) throw new DatabaseUrlError(`connect_timeout=${value} is not a whole number of seconds`);
        if (Number(value) > 0) target.connectTimeoutS = Math.max(2, Number(value)); // libpq's minimum
        break;
      }
      case "target_session_attrs": target.targetSessionAttrs = oneOf(TARGET_SESSION_ATTRS, value, "target_session_attrs"); break;
      case "options": target.options = value; break;
    }
  }

  // No host: libpq's default, the Unix socket.
  if (hosts.length === 0 || (hosts.length === 1 && hosts[0] === "")) hosts = [DEFAULT_SOCKET_DIRECTORY];
  if (hosts.some((h) => h === "")) throw new DatabaseUrlError("a host in the host list is empty");
  if (hosts.some((h) => h.startsWith("/")) && hosts.length > 1) throw new DatabaseUrlError("a Unix socket directory cannot be one of several hosts");
  // One port for all hosts, or one per host (libpq).
  const given = ports.map((p) => (p === undefined || p === "" ? 5432 : port(p)));
  if (given.length > 1 && given.length !== hosts.length) throw new DatabaseUrlError(`${given.length} ports for ${hosts.length} hosts`);
  target.hosts = hosts;
  target.ports = hosts.map((_, i) => given[given.length === 1 ? 0 : i] ?? 5432);
  if (target.sslrootcert === "system" && (target.sslmode === "prefer" || target.sslmode === "allow" || target.sslmode === "require")) target.sslmode = "verify-full";
  for (const [name, file] of [["sslrootcert", target.sslrootcert], ["sslcert", target.sslcert], ["sslkey", target.sslkey]] as const) {
    if (file === undefined || (name === "sslrootcert" && file === "system")) continue;
    try {
      readOperatorFile(file);
    } catch (err) {
      const problem = fileProblem(err);
      // Under systemd the service reads it as its own dynamic user, not as root.
      const where = problem === "EACCES" ? ` by the service's user: ${READABLE_PLACE[name]}` : "";
      throw new DatabaseUrlError(`${name} ${file}${copyOf(file)} cannot be read${where}: ${problem}`, false);
    }
  }
  if ((target.sslcert === undefined) !== (target.sslkey === undefined)) throw new DatabaseUrlError("sslcert and sslkey go together");
  checkTlsFiles(target);
  if (target.hosts[0]!.startsWith("/") && (target.sslmode === "require" || target.sslmode.startsWith("verify"))) {
    throw new DatabaseUrlError(`sslmode=${target.sslmode} over a Unix socket: PostgreSQL never offers TLS there`);
  }
  return target;
}

/**
 * The files as TLS will take them, tried once now: a file that is no PEM certificate, or a key
 * that is not the certificate's, failed only at the first connection, inside postgres.js's
 * start-up, where it ended the process (an unhandled rejection, exit 1, restarted by systemd
 * to fail again).
 */
function checkTlsFiles(target: DatabaseTarget): void {
  const { ca, client } = tlsFiles(target);
  const tried = (files: string, options: SecureContextOptions) => {
    try {
      createSecureContext(options);
    } catch (err) {
      throw new DatabaseUrlError(`${files} cannot be used for TLS: ${(err as Error).message}`, false);
    }
  };
  if (ca.ca) tried(`sslrootcert ${target.sslrootcert}${copyOf(target.sslrootcert!)} (PEM certificates)`, ca);
  if (client.cert) tried(`sslcert ${target.sslcert}${copyOf(target.sslcert!)} and sslkey ${target.sslkey}${copyOf(target.sslkey!)} (a PEM certificate and its private key)`, client);
}

/** The TLS files `target` names, read: its root certificates (none for `system`) and its client certificate and key. */
function tlsFiles(target: DatabaseTarget): { ca: { ca?: Buffer }; client: { cert?: Buffer; key?: Buffer } } {
  const read = (file: string) => readOperatorFile(file).content;
  return {
    ca: target.sslrootcert && target.sslrootcert !== "system" ? { ca: read(target.sslrootcert) } : {},
    client: target.sslcert ? { cert: read(target.sslcert), key: read(target.sslkey!) } : {},
  };
}

const SECRET = "***";

/** The URL with its password (in the user info or as ?password=) replaced by ***: for logs and messages. */
export function maskDatabaseUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url);
  if (!scheme) return "(not a URL)";
  const { user, password, hostlist, path, query } = splitUrl(url.slice(scheme[0].length));
  const userinfo = user === undefined ? "" : `${user}${password === undefined ? "" : `:${SECRET}`}@`;
  const maskedQuery = query === undefined ? "" : `?${query}`.replace(/([?&]password=)[^&]*/gi, `$1${SECRET}`);
  return scheme[0] + userinfo + hostlist + (path === undefined ? "" : `/${path}`) + maskedQuery;
}

/** What postgres.js needs to reach `target` (host list, socket, TLS, session attributes). */
export function connectOptions(target: DatabaseTarget): postgres.Options<{}> {
  const socketDirectory = target.hosts[0]!.startsWith("/") ? target.hosts[0]! : undefined;
  // postgres.js tries a list of hosts in order (its multi-host support takes arrays, though
  // its type declarations say one string and one number).
  const tcp = { host: target.hosts as unknown as string, port: target.ports as unknown as number };
  return {
    ...(socketDirectory ? { path: `${socketDirectory}/.s.PGSQL.${target.ports[0]}` } : tcp),
    ...(target.database !== undefined ? { database: target.database } : {}),
    ...(target.user !== undefined ? { user: target.user } : {}),
    ...(target.password !== undefined ? { pass: target.password } : {}),
    ssl: socketDirectory ? false : (tlsOptions(target) as postgres.Options<{}>["ssl"]),
    ...(target.targetSessionAttrs !== "any" ? { target_session_attrs: target.targetSessionAttrs } : {}),
  };
}

/**
 * libpq's sslmode in postgres.js's terms. allow is read as prefer (either way a session is
 * had, encrypted when the server offers it); require checks the certificate only when a
 * root certificate is given (as libpq does); verify-ca checks the chain, verify-full the
 * chain and the host name.
 */
function tlsOptions(target: DatabaseTarget): false | "prefer" | "require" | Record<string, unknown> {
  const { ca, client } = tlsFiles(target);
  switch (target.sslmode) {
    case "disable":
      return false;
    case "allow":
    case "prefer":
      return target.sslcert ? { rejectUnauthorized: false, ...client } : "prefer";
    case "require":
      if (target.sslrootcert) return { rejectUnauthorized: true, checkServerIdentity: () => undefined, ...ca, ...client };
      return target.sslcert ? { rejectUnauthorized: false, ...client } : "require";
    case "verify-ca":
      return { rejectUnauthorized: true, checkServerIdentity: () => undefined, ...ca, ...client };
    case "verify-full":
      return { rejectUnauthorized: true, ...ca, ...client };
  }
}
