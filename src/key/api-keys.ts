// The key stage of GET /external/v1/product-costs (src/service/pipeline.ts), and the keys it
// checks against.

import { createHash, timingSafeEqual } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../settings/config.ts";
import { fileProblem, readOperatorFile } from "../settings/operator-file.ts";
import { copyOf } from "../ops/units.ts";
import { INVALID_API_KEY, KEY_EXPIRED, NOT_CONFIGURED } from "../failures.ts";

// The set of active API keys. Keys are held only as SHA-256 digests: a presented key is
// hashed and compared against every digest with timingSafeEqual, so the time taken does
// not depend on how much of a key matches, nor on which key matched.

// The prefix in any case (SHA256: as people write it), then 64 hex digits in any case.
const DIGEST_PREFIX = /^sha256:/i;
const DIGEST_ENTRY = /^sha256:([0-9a-f]{64})$/i;
/**
 * A key is visible ASCII, no spaces: what an Authorization header carries byte for byte (a
 * header's other bytes reach the service as Latin-1, so a UTF-8 key could never match).
 */
export const KEY_CHARACTERS = /^[\x21-\x7e]+$/;
/** Shorter keys are accepted, with a warning: a key should be long enough that guessing is hopeless. */
export const SHORT_KEY = 16;

/** The systemd credential name that LoadCredential= should use for the key file. */
export const SYSTEMD_CREDENTIAL_NAME = "product-cost-api-keys";

export interface KeyMatch {
  /** Short, non-secret name of the key for logs: the first 8 hex digits of sha256(sha256(key)). */
  fingerprint: string;
  /** The operator's name for the key (the key file's inline `# label`), if it has one. */
  label?: string;
  /** The first instant the key is refused (the key file's `expires=`), in ms since the epoch. */
  expiresAt?: number;
  /** The key's own requests per minute (the key file's `rate=`; 0: none), instead of RATE_LIMIT_PER_MINUTE. */
  ratePerMinute?: number;
}

/** What the key file may say of a key besides its label, each written `name=value` after it. */
export interface KeyTerms {
  expiresAt?: number;
  ratePerMinute?: number;
}

/** One configured key or digest, where it came from, its label and its terms. */
export interface KeyEntry extends KeyTerms {
  value: string;
  source: string;
  label?: string;
}

/** A configured key as an operator may see it: never the key, a prefix of its digest. */
export interface KeyListing extends KeyTerms {
  fingerprint: string;
  /** The first 12 hex digits of the key's sha256 digest: what its line in the key file starts with. */
  digestPrefix: string;
  label?: string;
  source: string;
}

export interface ApiKeyRing {
  readonly size: number;
  /** How many keys each key file gave (a reload compares: a file that lost most of its keys is suspect). */
  readonly fileKeys: ReadonlyMap<string, number>;
  /** The fingerprint of every active key (to count what a reload added and removed). */
  readonly fingerprints: readonly string[];
  /** What an operator should hear about these keys (short keys), without the keys themselves. */
  readonly warnings: readonly string[];
  /** Every key, as `list-keys` and /metrics show them. */
  readonly listing: readonly KeyListing[];
  /** Returns the match for a presented key, or null. Runs in time independent of the key's content. */
  match(presented: string): KeyMatch | null;
}

export function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

export function fingerprintOfDigest(digestHex: string): string {
  return createHash("sha256").update(Buffer.from(digestHex, "hex")).digest("hex").slice(0, 8);
}

/** Parses key entries (plain keys or sha256:<hex> digests) into a ring. `source` names them in errors. */
export function buildKeyRing(entries: readonly KeyEntry[], fileWarnings: readonly string[] = [], fileKeys: ReadonlyMap<string, number> = new Map()): ApiKeyRing {
  const keys: { digest: Buffer; match: KeyMatch }[] = [];
  const listing: KeyListing[] = [];
  const problems: string[] = [];
  const warnings: string[] = [...fileWarnings];
  const seen = new Set<string>();
  for (const { value, source, label, expiresAt, ratePerMinute } of entries) {
    let hex: string;
    if (DIGEST_PREFIX.test(value)) {
      const m = DIGEST_ENTRY.exec(value);
      if (!m) {
        problems.push(`${source}: a sha256: entry must be followed by 64 hex digits`);
        continue;
      }
      hex = m[1]!.toLowerCase();
    } else if (!KEY_CHARACTERS.test(value)) {
      problems.push(`${source}: an API key must be visible ASCII characters only (no spaces, no other alphabets)`);
      continue;
    } else {
      if (value.length < SHORT_KEY) warnings.push(`${source}: the key is shorter than ${SHORT_KEY} characters, which is easy to guess`);
      hex = sha256Hex(value);
    }
    if (seen.has(hex)) continue; // the same key listed twice (e.g. env and file) is one key
    seen.add(hex);
    const fingerprint = fingerprintOfDigest(hex);
    const match: KeyMatch = {
      fingerprint,
      ...(label === undefined ? {} : { label }),
      ...(expiresAt === undefined ? {} : { expiresAt }),
      ...(ratePerMinute === undefined ? {} : { ratePerMinute }),
    };
    keys.push({ digest: Buffer.from(hex, "hex"), match });
    listing.push({ ...match, digestPrefix: hex.slice(0, 12), source });
  }
  if (problems.length) throw new ConfigError(problems.join("; "));

  return {
    size: keys.length,
    fileKeys,
    fingerprints: Object.freeze(keys.map((k) => k.match.fingerprint)),
    warnings: Object.freeze(warnings),
    listing: Object.freeze(listing),
    match(presented: string): KeyMatch | null {
      const candidate = createHash("sha256").update(presented, "utf8").digest();
      let found: KeyMatch | null = null;
      // Compare against every key, without stopping early, so timing says nothing about which matched.
      for (const key of keys) if (timingSafeEqual(candidate, key.digest)) found = key.match;
      return found && { ...found }; // the caller's own copy
    },
  };
}

/**
 * One key or digest per line, optionally followed by its terms (`expires=<date or time>`,
 * `rate=<requests a minute>`) and `# label`, each after whitespace (a key has no spaces, so
 * neither can be part of it); blank lines and lines starting with # are ignored. Anything else
 * after a key is refused: it would be silently dropped otherwise.
 */
export function parseKeyFile(text: string, source: string): KeyEntry[] {
  const out: KeyEntry[] = [];
  const problems: string[] = [];
  // A byte order mark (a file saved by a Windows editor) is not part of the first key.
  text.replace(/^\ufeff/, "").split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (!trimmed || trimmed.startsWith("#")) return;
    const where = `${source} line ${i + 1}`;
    const hash = trimmed.search(/\s#/);
    const [value, ...words] = (hash === -1 ? trimmed : trimmed.slice(0, hash)).trimEnd().split(/\s+/);
    const label = hash === -1 ? "" : trimmed.slice(hash).trim().slice(1).trim();
    const terms = keyTerms(words, where, problems);
    if (terms) out.push({ value: value!, source: where, ...(label ? { label: label.slice(0, 64) } : {}), ...terms });
  });
  if (problems.length) throw new ConfigError(problems.join("; "));
  return out;
}

/** The most a key's `rate=` may say (RATE_LIMIT_PER_MINUTE's own bound). */
const MAX_RATE_PER_MINUTE = 1_000_000;
const EXPIRY_DATE = /^\d{4}-\d{2}-\d{2}$/;
const EXPIRY_TIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2})?(Z|[+-]\d{2}:\d{2})$/i;

/** A key line's `name=value` words as terms; null (and a problem) when one is not understood. */
function keyTerms(words: readonly string[], where: string, problems: string[]): KeyTerms | null {
  const terms: KeyTerms = {};
  const fail = (problem: string) => (problems.push(`${where}: ${problem}`), null);
  for (const word of words) {
    const eq = word.indexOf("=");
    const [name, text] = eq === -1 ? [word, undefined] : [word.slice(0, eq), word.slice(eq + 1)];
    if (name === "expires" && text !== undefined) {
      if ("expiresAt" in terms) return fail("expires= is given twice");
      const at = expiryInstant(text);
      if (at === undefined) return fail(`expires=${text} is not a date (2027-06-30: refused from that day's start, UTC) or a time with its offset (2027-06-30T18:00:00Z)`);
      terms.expiresAt = at;
    } else if (name === "rate" && text !== undefined) {
      if ("ratePerMinute" in terms) return fail("rate= is given twice");
      if (!/^\d{1,7}$/.test(text) || Number(text) > MAX_RATE_PER_MINUTE) return fail(`rate=${text} is not a whole number of requests a minute from 0 (no limit) to ${MAX_RATE_PER_MINUTE}`);
      terms.ratePerMinute = Number(text);
    } else {
      return fail(`unexpected text after the key: ${JSON.stringify(word.slice(0, 40))} (a key has no spaces; after it may come expires=<date>, rate=<per minute> and # <label>)`);
    }
  }
  return terms;
}

/** An `expires=` value's instant in ms since the epoch: a date is its first instant in UTC; undefined if not a real date or time. */
export function expiryInstant(text: string): number | undefined {
  const date = EXPIRY_DATE.test(text) ? text : EXPIRY_TIME.exec(text)?.[1];
  if (date === undefined) return undefined;
  const at = Date.parse(date === text ? `${text}T00:00:00Z` : text.toUpperCase());
  // Date.parse takes 2027-02-30 as 2 March: a day that is not in the calendar is a typo.
  if (!Number.isFinite(at) || new Date(Date.parse(`${date}T00:00:00Z`)).toISOString().slice(0, 10) !== date) return undefined;
  return at;
}

export interface KeySources {
  apiKeys: string | undefined;
  apiKeysFile: string | undefined;
  credentialsDirectory: string | undefined;
}

/** A key file's text and mode. */
export interface KeyFileContent {
  text: string;
  mode: number;
}

/** The key files `sources` names, in the order they are read. */
export function keyFiles(sources: KeySources): string[] {
  const files: string[] = [];
  if (sources.apiKeysFile) files.push(sources.apiKeysFile);
  if (sources.credentialsDirectory) {
    const credential = join(sources.credentialsDirectory, SYSTEMD_CREDENTIAL_NAME);
    if (existsSync(credential)) files.push(credential);
  }
  return files;
}

function readNow(file: string): KeyFileContent {
  try {
    const { content, stats } = readOperatorFile(file);
    return { text: content.toString("utf8"), mode: stats.mode };
  } catch (err) {
    throw keyFileUnreadable(file, err);
  }
}

// A reload refuses a key file that lost more than half its keys at once, when it had this many
// or more: a partial copy looks just like that (issue 42: a 4,001-key file copied in place was
// taken with 1,075 keys). A small file is written in one go; removing most keys of a large one
// on purpose takes a restart, or two reloads.
export const KEY_DROP_MIN_KEYS = 10;

/**
 * Reads every configured key source: PRODUCT_COST_API_KEYS, PRODUCT_COST_API_KEYS_FILE and the
 * systemd credential file. Called at start and again on SIGHUP. An unreadable file is a
 * ConfigError (at start: exit 2; on SIGHUP: the old keys stay active).
 *
 * `refuseKeylessFiles` (the reload): a readable file with no key is a ConfigError too. An
 * editor's truncated save looks exactly like that, and taking it would revoke every key of
 * the file at once; a start still takes it (no key: every API request answers 503), so that
 * revoking every key stays possible, by a restart the operator chooses.
 */
export function loadKeyRing(
  sources: KeySources,
  { refuseKeylessFiles = false, read = readNow, previous }: { refuseKeylessFiles?: boolean; read?: (file: string) => KeyFileContent; previous?: ApiKeyRing } = {},
): ApiKeyRing {
  const entries: KeyEntry[] = [];
  if (sources.apiKeys) {
    sources.apiKeys.split(",").forEach((part, i) => {
      const value = part.trim();
      if (value) entries.push({ value, source: `PRODUCT_COST_API_KEYS entry ${i + 1}` });
    });
  }
  const fileWarnings: string[] = [];
  const fileKeys = new Map<string, number>();
  for (const file of keyFiles(sources)) {
    const { text, mode } = read(file);
    const fromFile = parseKeyFile(text, file);
    if (refuseKeylessFiles && fromFile.length === 0) {
      throw new ConfigError(
        `API key file ${file} holds no key (empty, or comments only: a truncated save?); to revoke every key, stop the service, or empty the file and restart it`,
      );
    }
    const before = previous?.fileKeys.get(file) ?? 0;
    if (before >= KEY_DROP_MIN_KEYS && fromFile.length < before / 2) {
      throw new ConfigError(
        `API key file ${file} holds ${fromFile.length} keys where it held ${before} (a partial copy?): replace it whole (write a new file, then mv it over the old one); to remove more than half the keys at once, restart the service`,
      );
    }
    fileKeys.set(file, fromFile.length);
    entries.push(...fromFile);
    // Plain keys readable by others are secrets in the open; a file of digests is not.
    if ((mode & 0o077) !== 0 && fromFile.some((e) => !DIGEST_PREFIX.test(e.value))) {
      fileWarnings.push(`${file} holds plain keys and is readable by group or others (mode ${(mode & 0o777).toString(8).padStart(4, "0")}): chmod 600 it, or keep only sha256: digests there`);
    }
  }
  return buildKeyRing(entries, fileWarnings, fileKeys);
}

/** A key file that cannot be read, said with its cause and, for a staged copy, the file to fix. */
export function keyFileUnreadable(file: string, err: unknown): ConfigError {
  return new ConfigError(`cannot read API key file ${file}: ${fileProblem(err)}${copyOf(file)}`);
}

// The key stage of GET /external/v1/product-costs (src/pipeline.ts): 503 when no key is
// configured, 401 for a key that is not one of them, 429 past the key's rate. The key is read
// out of the Authorization header exactly as FastAPI's HTTPBearer(auto_error=False) does: split
// at the first space, scheme "Bearer" compared case-insensitively, credentials stripped of
// surrounding whitespace (Python's str.strip()).

// Python's str.isspace() characters within Latin-1, the range a header value can hold.
const PY_WHITESPACE = new Set(["\t", "\n", "\x0b", "\x0c", "\r", "\x1c", "\x1d", "\x1e", "\x1f", " ", "\x85", "\xa0"]);

export function pythonStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && PY_WHITESPACE.has(text[start]!)) start++;
  while (end > start && PY_WHITESPACE.has(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/** The presented key, or null when the header is absent, not Bearer, or has no credentials. */
export function bearerCredentials(header: string | null | undefined): string | null {
  if (!header) return null;
  const space = header.indexOf(" ");
  const scheme = space === -1 ? header : header.slice(0, space);
  const credentials = space === -1 ? "" : pythonStrip(header.slice(space + 1));
  if (!scheme || !credentials) return null;
  if (scheme.toLowerCase() !== "bearer") return null;
  return credentials;
}

/** The key a request presents, found among `keys`; throws the failure otherwise. */
export function presentedKey(keys: ApiKeyRing, authorization: string | null): KeyMatch {
  if (keys.size === 0) throw NOT_CONFIGURED();
  const presented = bearerCredentials(authorization);
  const match = presented === null ? null : keys.match(presented);
  if (!match) throw INVALID_API_KEY();
  return match;
}

/** Keys that expire within this are named at start, after each reload and by list-keys (the alert's own horizon). */
export const EXPIRING_SOON_MS = 14 * 86_400_000;

/** Whether a key's `expires=` has come at `now` (ms since the epoch). */
export function hasExpired(key: KeyTerms, now: number): boolean {
  return key.expiresAt !== undefined && key.expiresAt <= now;
}

/** What `list-keys` says of a key: active, expiring (within EXPIRING_SOON_MS) or expired. */
export function keyState(key: KeyTerms, now: number): "active" | "expiring" | "expired" {
  if (hasExpired(key, now)) return "expired";
  return key.expiresAt !== undefined && key.expiresAt - now < EXPIRING_SOON_MS ? "expiring" : "active";
}

/**
 * A key past its `expires=` gets the same 401 as an unknown key: a client learns nothing of
 * which keys exist. Its request's line says which key it was and when it expired, at warn.
 */
export function refuseExpired(key: KeyMatch, now: number): void {
  if (hasExpired(key, now)) throw KEY_EXPIRED();
}
