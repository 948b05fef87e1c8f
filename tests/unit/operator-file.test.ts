// The files an operator names are read as regular files of bounded size, or refused at once
// with the reason (issue 52: a FIFO or /dev/zero as the key file hung the process, and a
// FIFO swapped in before SIGHUP stopped its event loop). Each file the service is given is
// read through the one helper, so each refuses the same way. (A hang here is the bug: the
// whole test process blocks, as the service did.)
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadKeyRing, type ApiKeyRing } from "../../src/key/api-keys.ts";
import { readSettled } from "../../src/key/settled-file.ts";
import { reloadOnSighup } from "../../src/cli/reload.ts";
import { stageFiles } from "../../src/cli/stage-files.ts";
import { readTls } from "../../src/edge/server.ts";
import { ConfigError, type Config } from "../../src/settings/config.ts";
import { parseDatabaseUrl } from "../../src/settings/database-url.ts";
import { fileProblem, OPERATOR_FILE_MAX_BYTES, readOpened, readOperatorFile } from "../../src/settings/operator-file.ts";
import { loadConfig } from "../support/config.ts";
import { memoryLogger } from "../support/memory-logger.ts";

const work = mkdtempSync(join(tmpdir(), "pce-operator-file-"));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function fifo(name: string): string {
  const path = join(work, name);
  const made = Bun.spawnSync(["mkfifo", path]);
  if (made.exitCode !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
  return path;
}

/** A sparse file of `bytes` zero bytes (no disk written). */
function sized(name: string, bytes: number): string {
  const path = join(work, name);
  writeFileSync(path, "");
  truncateSync(path, bytes);
  return path;
}

/** What readOperatorFile throws for `path`, as the error lines say it, and how long it took. */
function refusal(path: string): { problem: string; ms: number } {
  const started = performance.now();
  try {
    readOperatorFile(path);
  } catch (err) {
    return { problem: fileProblem(err), ms: performance.now() - started };
  }
  throw new Error(`${path} was read`);
}

const TOO_LARGE = "larger than 16 MiB, more than any key, URL or certificate file holds";

describe("readOperatorFile", () => {
  test("reads a regular file whole, with its status (the key file's mode is warned about)", () => {
    const path = join(work, "plain");
    writeFileSync(path, "key-one\nkey-two\n", { mode: 0o640 });
    const { content, stats } = readOperatorFile(path);
    expect([content.toString("utf8"), stats.mode & 0o777]).toEqual(["key-one\nkey-two\n", 0o640]);
  });

  test("a FIFO with no writer is refused at once, not waited on", () => {
    const { problem, ms } = refusal(fifo("keys-fifo"));
    expect(problem).toBe("not a regular file (a FIFO)");
    expect(ms).toBeLessThan(100);
  });

  test("a FIFO put in place of a file between its check and its open neither blocks the open nor is read", () => {
    const started = performance.now();
    expect(() => readOpened(fifo("swapped-fifo"))).toThrow(new Error("not a regular file (a FIFO)"));
    expect(performance.now() - started).toBeLessThan(100);
  });

  test("/dev/zero is refused before anything is read from it", () => {
    const { problem, ms } = refusal("/dev/zero");
    expect(problem).toBe("not a regular file (a character device)");
    expect(ms).toBeLessThan(100);
  });

  test(`a file of ${OPERATOR_FILE_MAX_BYTES} bytes (16 MiB) is read; one byte more is refused`, () => {
    expect(readOperatorFile(sized("at-bound", OPERATOR_FILE_MAX_BYTES)).content.length).toBe(OPERATOR_FILE_MAX_BYTES);
    expect(refusal(sized("over-bound", OPERATOR_FILE_MAX_BYTES + 1)).problem).toBe(TOO_LARGE);
  });

  test("a directory, a symlink loop and a missing file are refused with the system's code, as before", () => {
    mkdirSync(join(work, "a-directory"));
    symlinkSync(join(work, "loop-b"), join(work, "loop-a"));
    symlinkSync(join(work, "loop-a"), join(work, "loop-b"));
    expect(refusal(join(work, "a-directory")).problem).toBe("EISDIR");
    expect(refusal(join(work, "loop-a")).problem).toBe("ELOOP");
    expect(refusal(join(work, "missing")).problem).toBe("ENOENT");
  });

  test("a link to a regular file is read (systemd credentials and /etc/ssl/certs are links)", () => {
    writeFileSync(join(work, "target"), "postgres://db/x\n");
    symlinkSync(join(work, "target"), join(work, "link"));
    expect(readOperatorFile(join(work, "link")).content.toString()).toBe("postgres://db/x\n");
  });
});

describe("every file the service is given refuses a FIFO, /dev/zero and a file over 16 MiB with its own line", () => {
  const noKeys = { apiKeys: undefined, credentialsDirectory: undefined };
  // [what is read, how the service reads it, the line for `file` refused for `problem`]
  const readers: [string, (file: string) => unknown, (file: string, problem: string) => string][] = [
    ["the API key file, at start", (file) => loadKeyRing({ ...noKeys, apiKeysFile: file }), (file, problem) => `cannot read API key file ${file}: ${problem}`],
    ["the API key file, on SIGHUP", (file) => readSettled(file, 0), (file, problem) => `cannot read API key file ${file}: ${problem}`],
    ["DATABASE_URL_FILE", (file) => loadConfig([], { DATABASE_URL_FILE: file }), (file, problem) => `cannot read DATABASE_URL_FILE ${file}: ${problem}`],
    ["TLS_CERT_FILE", (file) => readTls({ host: "127.0.0.1", port: 0, tlsCertFile: file, tlsKeyFile: file }), (file, problem) => `cannot read TLS_CERT_FILE ${file}: ${problem}`],
    ["the URL's sslrootcert", (file) => parseDatabaseUrl(`postgres://db/x?sslmode=verify-full&sslrootcert=${file}`), (file, problem) => `sslrootcert ${file} cannot be read: ${problem}`],
  ];
  const files: [string, () => string, string][] = [
    ["a FIFO", () => fifo(`fifo-${Math.random().toString(36).slice(2)}`), "not a regular file (a FIFO)"],
    ["/dev/zero", () => "/dev/zero", "not a regular file (a character device)"],
    ["a file over 16 MiB", () => sized(`big-${Math.random().toString(36).slice(2)}`, OPERATOR_FILE_MAX_BYTES + 1), TOO_LARGE],
  ];
  const cases = readers.flatMap(([what, read, line]) => files.map(([kind, make, problem]) => [what, kind, read, make, line, problem] as const));
  test.each(cases)("%s: %s", async (_, __, read, make, line, problem) => {
    const file = make();
    const started = performance.now();
    const failure = await Promise.resolve()
      .then(() => read(file))
      .then(() => new Error("read"), (err: unknown) => err);
    expect(String((failure as Error).message)).toBe(line(file, problem));
    expect(performance.now() - started).toBeLessThan(1000);
  });

  test("stage-files (as root, before each start and reload) refuses a FIFO in /etc/product-cost-export at once", () => {
    const from = join(work, "etc");
    const to = join(work, "run");
    mkdirSync(from);
    mkdirSync(to);
    const keys = join(from, "api-keys");
    Bun.spawnSync(["mkfifo", keys]);
    expect(() => stageFiles(from, to)).toThrow(new ConfigError(`stage-files: cannot read ${keys}: not a regular file (a FIFO)`));
  });

  test("a key file replaced by a FIFO on SIGHUP: the previous keys stay, and one line says why", async () => {
    const file = join(work, "reloaded-keys");
    writeFileSync(file, "kept-key-0123456789abc\n", { mode: 0o600 });
    const config = { apiKeys: undefined, apiKeysFile: file, credentialsDirectory: undefined } as Config;
    let keys: ApiKeyRing = loadKeyRing(config);
    rmSync(file);
    Bun.spawnSync(["mkfifo", file]);
    const logger = memoryLogger();
    await reloadOnSighup({ config, logger, tlsServed: undefined, keys: () => keys, setKeys: (next) => (keys = next) });
    expect(keys.match("kept-key-0123456789abc")).not.toBeNull();
    expect(logger.lines.map(({ time: _, ...l }) => l)).toEqual([
      { level: "error", msg: "api keys not reloaded, the previous keys stay active", error: `cannot read API key file ${file}: not a regular file (a FIFO)`, error_type: "ConfigError" },
    ]);
  });
});
