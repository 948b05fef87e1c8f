// `generate-key` and `hash-key`: making a key and the line of the key file that holds only
// its digest, so that the service's host never needs the key itself; `list-keys`: the keys
// configured, as an operator manages them, never a key.

import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { KEY_CHARACTERS, keyState, loadKeyRing, sha256Hex } from "../key/api-keys.ts";
import { CONFIG_DIRECTORY } from "../ops/units.ts";
import { ConfigError } from "../settings/config.ts";
import type { CommandLine } from "./command-line.ts";
import { InterruptedError } from "../failures.ts";

/** `generate-key [--label NAME]`: the key, then its line for the key file. */
export function generateKey({ own }: CommandLine): void {
  const label = own.has("label") ? checkLabel(own.get("label")!) : undefined;
  // 32 bytes from the operating system's CSPRNG, base64url: 43 URL-safe characters, 256 bits.
  const key = randomBytes(32).toString("base64url");
  process.stdout.write(`${key}\n${keyFileLine(key, label)}\n`);
  if (process.stdout.isTTY) {
    process.stderr.write("The first line is the key, for the client (it is stored nowhere). Append the second line to the key file, then: systemctl reload product-cost-export\n");
  }
}

/** A label fits on the key file's line: printable, one line, not too long for a log field. */
function checkLabel(label: string): string {
  const trimmed = label.trim();
  if (!trimmed || trimmed.length > 64 || /[\x00-\x1f\x7f]/.test(trimmed)) {
    throw new ConfigError(`generate-key: --label must be 1 to 64 printable characters on one line, got ${JSON.stringify(label)}`);
  }
  return trimmed;
}

/** The key file's line for a key: its digest, and the label as an inline comment. */
function keyFileLine(key: string, label?: string): string {
  return `sha256:${sha256Hex(key)}${label ? `  # ${label}` : ""}`;
}

/** Reads a line from the terminal without showing it (raw mode: no echo); Ctrl-C aborts. */
async function promptHidden(prompt: string): Promise<string> {
  const stdin = process.stdin;
  // No echo before the prompt shows: what is typed as soon as it appears stays hidden.
  stdin.setRawMode(true);
  process.stderr.write(prompt);
  stdin.resume();
  try {
    return await new Promise<string>((resolve, reject) => {
      let typed = "";
      const onData = (chunk: Buffer) => {
        for (const ch of chunk.toString("utf8")) {
          if (ch === "\r" || ch === "\n" || (ch === "\x04" && typed === "")) {
            stdin.off("data", onData);
            return resolve(typed);
          }
          if (ch === "\x03") {
            stdin.off("data", onData);
            return reject(new InterruptedError("hash-key: interrupted"));
          }
          if (ch === "\x7f" || ch === "\b") typed = typed.slice(0, -1);
          else typed += ch;
        }
      };
      stdin.on("data", onData);
    });
  } finally {
    stdin.setRawMode(false);
    stdin.pause();
    process.stderr.write("\n");
  }
}

/** `hash-key [KEY]`: the key file's line for the argument, else the key typed (without echo), else stdin's first line. */
export async function hashKey({ args: [argument] }: CommandLine): Promise<void> {
  let key: string;
  if (argument !== undefined) key = argument;
  else if (process.stdin.isTTY) key = await promptHidden("API key (not shown): ");
  else key = (await Bun.stdin.text()).replace(/\r?\n$/, "");
  key = key.trim();
  if (!key) throw new ConfigError('hash-key: no key given (usage: product-cost-export hash-key, then type it; or printf %s "$KEY" | product-cost-export hash-key)');
  if (!KEY_CHARACTERS.test(key)) throw new ConfigError("hash-key: an API key is visible ASCII characters only (no spaces, no other alphabets)");
  process.stdout.write(keyFileLine(key) + "\n");
}

/**
 * `list-keys [--json]`: every configured key (the variable, the key file, the systemd
 * credential) with its label, fingerprint, digest prefix, expiry, state, rate and line. With
 * none configured, the packaged key file /etc/product-cost-export/api-keys, where it is.
 */
export function listKeys({ config, own }: CommandLine): void {
  const packaged = join(CONFIG_DIRECTORY, "api-keys");
  const configured = config.apiKeys || config.apiKeysFile || config.credentialsDirectory;
  const sources = configured ? config : { ...config, apiKeysFile: existsSync(packaged) ? packaged : undefined };
  const ring = loadKeyRing(sources);
  const now = Date.now();
  const rows = ring.listing.map((k) => ({
    label: k.label ?? null,
    fingerprint: k.fingerprint,
    digest: `sha256:${k.digestPrefix}`,
    expires: k.expiresAt === undefined ? null : new Date(k.expiresAt).toISOString(),
    state: keyState(k, now),
    rate_per_minute: (k.ratePerMinute ?? config.rateLimitPerMinute) || null, // null: no limit (rate=0 included)
    source: k.source,
  }));
  if (own.get("json") === "true") return void process.stdout.write(JSON.stringify(rows) + "\n");
  if (rows.length === 0) return void process.stderr.write(configured || sources.apiKeysFile ? "list-keys: no key configured\n" : `list-keys: no key configured (PRODUCT_COST_API_KEYS, --api-keys-file, and no ${packaged})\n`);
  const table = [
    ["LABEL", "FINGERPRINT", "DIGEST", "EXPIRES", "STATE", "RATE", "SOURCE"],
    ...rows.map((r) => [r.label ?? "-", r.fingerprint, r.digest + "…", r.expires ?? "never", r.state, r.rate_per_minute ? `${r.rate_per_minute}/min` : "none", r.source]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table) process.stdout.write(row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ") + "\n");
}
