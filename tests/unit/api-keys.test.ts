import { describe, expect, test } from "bun:test";
import { appendFileSync, chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildKeyRing, loadKeyRing, parseKeyFile, sha256Hex, type ApiKeyRing } from "../../src/key/api-keys.ts";
import { ConfigError, type Config } from "../../src/settings/config.ts";
import { reloadOnSighup } from "../../src/cli/reload.ts";
import { readSettled } from "../../src/key/settled-file.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const entry = (value: string) => ({ value, source: "test" });

describe("API key ring", () => {
  test("matches a plain key and reports a fingerprint that is not the key", () => {
    const ring = buildKeyRing([entry("alpha-key")]);
    const m = ring.match("alpha-key");
    expect(m?.fingerprint).toMatch(/^[0-9a-f]{8}$/);
    expect(sha256Hex("alpha-key").startsWith(m!.fingerprint)).toBe(false);
    expect(ring.match("alpha-ke")).toBeNull();
    expect(ring.match("alpha-key ")).toBeNull();
    expect(ring.match("")).toBeNull();
  });

  test("a sha256:<hex> entry accepts the key whose digest it is, in either hex case", () => {
    const ring = buildKeyRing([entry("sha256:" + sha256Hex("secret").toUpperCase())]);
    expect(ring.match("secret")).not.toBeNull();
    expect(ring.match("sha256:" + sha256Hex("secret"))).toBeNull();
  });

  test("a key and its digest give the same fingerprint and count once", () => {
    const ring = buildKeyRing([entry("k1"), entry("sha256:" + sha256Hex("k1")), entry("k2")]);
    expect(ring.size).toBe(2);
    expect(ring.match("k1")).toEqual(buildKeyRing([entry("k1")]).match("k1"));
  });

  test("the digest prefix is read in any case: SHA256: as people write it", () => {
    const ring = buildKeyRing([entry("SHA256:" + sha256Hex("secret")), entry("Sha256:" + sha256Hex("other"))]);
    expect([ring.size, ring.match("secret") !== null, ring.match("other") !== null]).toEqual([2, true, true]);
  });

  test("a key is visible ASCII: spaces, control bytes and other alphabets are a configuration error naming the source, never the key", () => {
    for (const bad of ["with space", "tab\there", "caf\u00e9-key-0123456789", "\u043a\u043b\u044e\u0447-0123456789"]) {
      expect(() => buildKeyRing([{ value: bad, source: "keys.txt line 2" }])).toThrow(
        new ConfigError("keys.txt line 2: an API key must be visible ASCII characters only (no spaces, no other alphabets)"),
      );
    }
  });

  test("keys shorter than 16 characters are accepted with a warning that names the source, not the key", () => {
    const ring = buildKeyRing([{ value: "short-1", source: "env entry 1" }, { value: "long-enough-key-0123", source: "env entry 2" }]);
    expect(ring.size).toBe(2);
    expect(ring.warnings).toEqual(["env entry 1: the key is shorter than 16 characters, which is easy to guess"]);
    // A digest's key length is unknown: no warning.
    expect(buildKeyRing([entry("sha256:" + sha256Hex("k"))]).warnings).toEqual([]);
  });

  test("a malformed digest entry is a configuration error naming its source", () => {
    expect(() => buildKeyRing([{ value: "sha256:abc", source: "keys.txt line 3" }])).toThrow(
      new ConfigError("keys.txt line 3: a sha256: entry must be followed by 64 hex digits"),
    );
  });

  test("key files: one per line, # comments and blank lines ignored, whitespace trimmed", () => {
    expect(parseKeyFile("# keys\n\n  k1  \r\nk2\n#k3\n", "f").map((e) => e.value)).toEqual(["k1", "k2"]);
  });

  test("a key file saved with a byte order mark and CRLF line ends reads the same keys", () => {
    expect(parseKeyFile("\ufeffwindows-key-0123456789  # from Notepad\r\nsecond-key-0123456789\r\n", "f")).toEqual([
      { value: "windows-key-0123456789", source: "f line 1", label: "from Notepad" },
      { value: "second-key-0123456789", source: "f line 2" },
    ]);
  });

  test("an inline `# label` after a key or digest names it; other text after a key is refused", () => {
    const digest = `sha256:${sha256Hex("labelled-key-0123456")}`;
    const entries = parseKeyFile(`plain-key-0123456789  # BI laptop (Ann)\n${digest}\t#  ETL  \nbare-key-0123456789 #\nk#not-a-label-0123\n`, "f");
    expect(entries).toEqual([
      { value: "plain-key-0123456789", source: "f line 1", label: "BI laptop (Ann)" },
      { value: digest, source: "f line 2", label: "ETL" },
      { value: "bare-key-0123456789", source: "f line 3" },
      { value: "k#not-a-label-0123", source: "f line 4" }, // # inside a key is part of it
    ]);
    const ring = buildKeyRing(entries);
    expect(ring.match("plain-key-0123456789")).toMatchObject({ label: "BI laptop (Ann)" });
    expect(ring.match("labelled-key-0123456")).toMatchObject({ label: "ETL" });
    expect(ring.match("bare-key-0123456789")?.label).toBeUndefined();
    expect(() => parseKeyFile("good-key-0123456789\nkey-0123456789 trailing words\n", "f")).toThrow(
      new ConfigError('f line 2: unexpected text after the key: "trailing" (a key has no spaces; after it may come expires=<date>, rate=<per minute> and # <label>)'),
    );
  });

  test("a key file with plain keys that group or others can read gets a warning; digests alone or mode 0600 do not", () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-keys-mode-"));
    const file = (name: string, text: string, mode: number) => {
      writeFileSync(join(dir, name), text);
      chmodSync(join(dir, name), mode);
      return loadKeyRing({ apiKeys: undefined, apiKeysFile: join(dir, name), credentialsDirectory: undefined }).warnings;
    };
    expect(file("open", "plain-key-0123456789\n", 0o644)).toEqual([
      `${join(dir, "open")} holds plain keys and is readable by group or others (mode 0644): chmod 600 it, or keep only sha256: digests there`,
    ]);
    expect(file("private", "plain-key-0123456789\n", 0o600)).toEqual([]);
    expect(file("digests", `sha256:${sha256Hex("x-0123456789abcdef")}  # ok\n`, 0o644)).toEqual([]);
  });

  test("loads env, file and systemd credential together", () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-keys-"));
    writeFileSync(join(dir, "file"), "from-file\n");
    writeFileSync(join(dir, "product-cost-api-keys"), "from-credential\n");
    const ring = loadKeyRing({ apiKeys: " from-env , ,other ", apiKeysFile: join(dir, "file"), credentialsDirectory: dir });
    expect(ring.size).toBe(4);
    for (const k of ["from-env", "other", "from-file", "from-credential"]) expect(ring.match(k)).not.toBeNull();
  });

  test("no source configured: an empty ring", () => {
    expect(loadKeyRing({ apiKeys: undefined, apiKeysFile: undefined, credentialsDirectory: undefined }).size).toBe(0);
  });

  test("an unreadable key file is a configuration error", () => {
    expect(() => loadKeyRing({ apiKeys: undefined, apiKeysFile: "/nonexistent/k", credentialsDirectory: undefined })).toThrow(
      new ConfigError("cannot read API key file /nonexistent/k: ENOENT"),
    );
  });
});

describe("SIGHUP's reload of the keys", () => {
  /** The keys after a start on `first` and a reload on `then` (the key file's content, or null: the file gone), and what the reload logged. */
  async function reload(first: string, then: string | null, apiKeys?: string) {
    const file = join(mkdtempSync(join(tmpdir(), "pce-reload-")), "api-keys");
    writeFileSync(file, first, { mode: 0o600 });
    const config = { apiKeys, apiKeysFile: file, credentialsDirectory: undefined } as Config;
    let keys: ApiKeyRing = loadKeyRing(config);
    if (then === null) rmSync(file);
    else writeFileSync(file, then);
    const logger = memoryLogger();
    await reloadOnSighup({ config, logger, tlsServed: undefined, keys: () => keys, setKeys: (next) => (keys = next) });
    return { keys, file, lines: logger.lines.map(({ time: _, ...l }) => l) };
  }
  const KEYS = "first-key-0123456789\nsecond-key-0123456789\n";

  test.each([
    ["empty (a truncated save)", ""],
    ["blank lines only", "\n  \n\r\n"],
    ["comments only", "# every key went\n\n# here\n"],
    ["a byte order mark only", "\ufeff"],
  ])("a readable key file with no key, %s: the previous keys stay active and the log says why, at error", async (_, text) => {
    const { keys, file, lines } = await reload(KEYS, text);
    expect(["first-key-0123456789", "second-key-0123456789"].map((k) => keys.match(k) !== null)).toEqual([true, true]);
    expect(lines).toEqual([
      {
        level: "error",
        msg: "api keys not reloaded, the previous keys stay active",
        error: `API key file ${file} holds no key (empty, or comments only: a truncated save?); to revoke every key, stop the service, or empty the file and restart it`,
        error_type: "ConfigError",
      },
    ]);
  });

  test("the same with keys from PRODUCT_COST_API_KEYS beside it: the file's keys are not dropped", async () => {
    const { keys, lines } = await reload(KEYS, "", "env-key-0123456789abc");
    expect(keys.size).toBe(3);
    expect(lines.map((l) => l.msg)).toEqual(["api keys not reloaded, the previous keys stay active"]);
  });

  test("a file that cannot be read: the same, with its own cause", async () => {
    const { keys, file, lines } = await reload(KEYS, null);
    expect(keys.size).toBe(2);
    expect(lines).toEqual([
      { level: "error", msg: "api keys not reloaded, the previous keys stay active", error: `cannot read API key file ${file}: ENOENT`, error_type: "ConfigError" },
    ]);
  });

  test("a file with one key left replaces the keys, as before", async () => {
    const { keys, lines } = await reload(KEYS, "second-key-0123456789\n");
    expect([keys.size, keys.match("first-key-0123456789"), keys.match("second-key-0123456789") !== null]).toEqual([1, null, true]);
    expect(lines).toEqual([{ level: "info", msg: "api keys reloaded", api_keys: 1, added: 0, removed: 1 }]);
  });

  test("a file that lost more than half of its ten or more keys at once is refused, the previous keys stay (issue 42: a partial copy)", async () => {
    const many = Array.from({ length: 20 }, (_, i) => `bulk-key-${String(i).padStart(4, "0")}-0123456789`);
    const { keys, file, lines } = await reload(many.join("\n") + "\n", many.slice(0, 9).join("\n") + "\n");
    expect(keys.size).toBe(20);
    expect(lines).toEqual([
      {
        level: "error",
        msg: "api keys not reloaded, the previous keys stay active",
        error: `API key file ${file} holds 9 keys where it held 20 (a partial copy?): replace it whole (write a new file, then mv it over the old one); to remove more than half the keys at once, restart the service`,
        error_type: "ConfigError",
      },
    ]);
    // Half of them is no partial copy's sign: taken.
    expect((await reload(many.join("\n") + "\n", many.slice(0, 10).join("\n") + "\n")).keys.size).toBe(10);
  });

  test("a file being written is read once it has been still for half a second: every key of it, not a piece", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "pce-settle-")), "api-keys");
    const whole = Array.from({ length: 4001 }, (_, i) => `settle-key-${String(i).padStart(5, "0")}-0123456789`).join("\n") + "\n";
    writeFileSync(file, whole.slice(0, 40_000)); // a copy that has written its first pieces
    const reading = readSettled(file);
    for (let at = 40_000; at < whole.length; at += 40_000) {
      await Bun.sleep(100);
      appendFileSync(file, whole.slice(at, at + 40_000));
    }
    expect((await reading).text).toBe(whole);
  });

  test("a file that never stops changing is refused after the time limit, saying how to replace it", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "pce-busy-")), "api-keys");
    writeFileSync(file, "busy-key-0123456789\n");
    let writing = true;
    const writer = (async () => {
      while (writing) {
        appendFileSync(file, "# still writing\n");
        await Bun.sleep(50);
      }
    })();
    const failure = await readSettled(file, 200, 1000).catch((err) => err);
    writing = false;
    await writer;
    expect(failure).toEqual(
      new ConfigError(`API key file ${file} kept changing for 1 s (or changed while it was read): replace it whole (write a new file, then mv it over the old one), then reload`),
    );
  });

  test("at start an empty key file is still accepted: no key, every API request answers 503 (the way to revoke every key)", () => {
    const file = join(mkdtempSync(join(tmpdir(), "pce-start-")), "api-keys");
    writeFileSync(file, "");
    expect(loadKeyRing({ apiKeys: undefined, apiKeysFile: file, credentialsDirectory: undefined }).size).toBe(0);
  });
});
