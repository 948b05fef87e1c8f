// The set of active API keys. Keys are held only as SHA-256 digests: a presented key is
// hashed and compared against every digest with timingSafeEqual, so the time taken does
// not depend on how much of a key matches, nor on which key matched.

import { createHash, timingSafeEqual } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config.ts";

const DIGEST_ENTRY = /^sha256:([0-9a-fA-F]{64})$/;

/** The systemd credential name that LoadCredential= should use for the key file. */
export const SYSTEMD_CREDENTIAL_NAME = "product-cost-api-keys";

export interface KeyMatch {
  /** Short, non-secret name of the key for logs: the first 8 hex digits of sha256(sha256(key)). */
  fingerprint: string;
}

export interface ApiKeyRing {
  readonly size: number;
  /** The fingerprint of every active key, for the startup and reload log lines. */
  readonly fingerprints: readonly string[];
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
export function buildKeyRing(entries: readonly { value: string; source: string }[]): ApiKeyRing {
  const digests: Buffer[] = [];
  const fingerprints: string[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const { value, source } of entries) {
    let hex: string;
    if (value.toLowerCase().startsWith("sha256:")) {
      const m = DIGEST_ENTRY.exec(value);
      if (!m) {
        problems.push(`${source}: a sha256: entry must be followed by 64 hex digits`);
        continue;
      }
      hex = m[1]!.toLowerCase();
    } else {
      hex = sha256Hex(value);
    }
    if (seen.has(hex)) continue; // the same key listed twice (e.g. env and file) is one key
    seen.add(hex);
    digests.push(Buffer.from(hex, "hex"));
    fingerprints.push(fingerprintOfDigest(hex));
  }
  if (problems.length) throw new ConfigError(problems.join("; "));

  return {
    size: digests.length,
    fingerprints: Object.freeze([...fingerprints]),
    match(presented: string): KeyMatch | null {
      const candidate = createHash("sha256").update(presented, "utf8").digest();
      let found = -1;
      // Compare against every key, without stopping early, so timing says nothing about which matched.
      for (let i = 0; i < digests.length; i++) {
        if (timingSafeEqual(candidate, digests[i]!)) found = i;
      }
      return found === -1 ? null : { fingerprint: fingerprints[found]! };
    },
  };
}

/** One key or digest per line; blank lines and lines starting with # are ignored. */
export function parseKeyFile(text: string, source: string): { value: string; source: string }[] {
  const out: { value: string; source: string }[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const value = line.trim();
    if (value && !value.startsWith("#")) out.push({ value, source: `${source} line ${i + 1}` });
  });
  return out;
}

export interface KeySources {
  apiKeys: string | undefined;
  apiKeysFile: string | undefined;
  credentialsDirectory: string | undefined;
}

/**
 * Reads every configured key source: PRODUCT_COST_API_KEYS, PRODUCT_COST_API_KEYS_FILE and the
 * systemd credential file. Called at start and again on SIGHUP. An unreadable file is a
 * ConfigError (at start: exit 2; on SIGHUP: the old keys stay active).
 */
export function loadKeyRing(sources: KeySources): ApiKeyRing {
  const entries: { value: string; source: string }[] = [];
  if (sources.apiKeys) {
    sources.apiKeys.split(",").forEach((part, i) => {
      const value = part.trim();
      if (value) entries.push({ value, source: `PRODUCT_COST_API_KEYS entry ${i + 1}` });
    });
  }
  const files: string[] = [];
  if (sources.apiKeysFile) files.push(sources.apiKeysFile);
  if (sources.credentialsDirectory) {
    const credential = join(sources.credentialsDirectory, SYSTEMD_CREDENTIAL_NAME);
    if (existsSync(credential)) files.push(credential);
  }
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(file, "utf8");
    } catch (err) {
      throw new ConfigError(`cannot read API key file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    entries.push(...parseKeyFile(text, file));
  }
  return buildKeyRing(entries);
}
