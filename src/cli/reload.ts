// What SIGHUP does: re-read the API keys from every source, so a key can be added or
// removed without a restart (requests in flight keep the key they were admitted with).
// A key file is read once it has stopped changing (key/settled-file.ts). A key source that
// cannot be read, a key file that holds no key (an editor's truncated save looks just like
// that), one that lost more than half its keys at once (a partial copy), or one that kept
// changing keeps the previous keys active and logs why. Signals that arrive during a reload
// make one more reload after it.
//
// The TLS certificate cannot be swapped the same way: Bun's server.reload() accepts `tls`
// but ignores it (documented: only fetch/error/routes/websocket are updated), and there is
// no other in-process way (pinned by tests/http/tls.test.ts, which fails when Bun starts
// swapping). So SIGHUP only notices a changed certificate or key on disk and says that a
// restart is needed to serve it.

import { createHash } from "node:crypto";
import { EXPIRING_SOON_MS, hasExpired, keyFiles, loadKeyRing, type ApiKeyRing, type KeyFileContent } from "../key/api-keys.ts";
import { readSettled } from "../key/settled-file.ts";
import type { Config } from "../settings/config.ts";
import { readTls } from "../edge/server.ts";
import { errorFields, type Logger } from "../ops/log.ts";

/** A digest of the certificate and key files' current content; undefined without TLS. */
export function tlsDigest(config: Config): string | undefined {
  const tls = readTls(config);
  return tls && createHash("sha256").update(tls.cert).update("\0").update(tls.key).digest("hex");
}

export interface ReloadDeps {
  config: Config;
  logger: Logger;
  /** The keys active now. */
  keys(): ApiKeyRing;
  setKeys(keys: ApiKeyRing): void;
  /** tlsDigest() of what the server was started with. */
  tlsServed: string | undefined;
}

/** How logs name a key: its label, else its fingerprint. */
const keyName = (k: { label?: string; fingerprint: string }) => k.label ?? k.fingerprint;

/** The warnings about a key ring (short keys, expiries, none at all), at start and after each reload. */
export function logKeyWarnings(logger: Logger, keys: ApiKeyRing): void {
  // A few lines at most, however many keys are short.
  for (const warning of keys.warnings.slice(0, 5)) logger.warn("weak API key", { where: warning });
  if (keys.warnings.length > 5) logger.warn("weak API keys", { more: keys.warnings.length - 5 });
  // Expiries an operator should act on: expired keys still listed, keys that expire within two weeks.
  const now = Date.now();
  const expired = keys.listing.filter((k) => hasExpired(k, now));
  const soon = keys.listing.filter((k) => !hasExpired(k, now) && k.expiresAt! - now < EXPIRING_SOON_MS);
  if (expired.length) logger.warn("api keys expired: they answer 401, remove them from the key file", { expired: expired.length, keys: expired.slice(0, 5).map(keyName) });
  if (soon.length) logger.warn("api keys expire within 14 days: hand out new ones (generate-key)", { expiring: soon.length, keys: soon.slice(0, 5).map((k) => `${keyName(k)} ${new Date(k.expiresAt!).toISOString()}`) });
  if (keys.size === 0) {
    logger.warn("no API key configured: every request to /external/v1/product-costs answers 503 EXTERNAL_API_NOT_CONFIGURED");
  }
}

/** A SIGHUP handler: reloads one at a time, and once more after one if signals came during it. `done` after each. */
export function reloader(deps: ReloadDeps, started: () => void, done: () => void): () => void {
  let running = false;
  let again = false;
  const run = async () => {
    running = true;
    do {
      again = false;
      started();
      await reloadOnSighup(deps);
      done();
    } while (again);
    running = false;
  };
  return () => {
    if (running) again = true;
    else void run();
  };
}

export async function reloadOnSighup(deps: ReloadDeps): Promise<void> {
  const { config, logger } = deps;
  try {
    const before = new Set(deps.keys().fingerprints);
    const contents = new Map<string, KeyFileContent>();
    for (const file of keyFiles(config)) contents.set(file, await readSettled(file));
    const keys = loadKeyRing(config, { refuseKeylessFiles: true, read: (file) => contents.get(file)!, previous: deps.keys() });
    deps.setKeys(keys);
    // Counts, never lists: a file of 100,000 keys must not make a megabyte log line.
    const added = keys.fingerprints.filter((f) => !before.has(f)).length;
    logger.info("api keys reloaded", { api_keys: keys.size, added, removed: before.size - (keys.size - added) });
    logKeyWarnings(logger, keys);
  } catch (err) {
    logger.error("api keys not reloaded, the previous keys stay active", errorFields(err));
  }

  if (deps.tlsServed === undefined) return;
  let now: string | undefined;
  try {
    now = tlsDigest(config);
  } catch (err) {
    logger.error("TLS certificate or key not readable, the served certificate stays", errorFields(err));
    return;
  }
  if (now !== deps.tlsServed) {
    logger.warn("TLS certificate or key changed on disk: restart the service to serve it (a running server keeps its certificate)", {
      tls_cert_file: config.tlsCertFile,
    });
  }
}
