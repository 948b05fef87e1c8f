// What a release build promises beyond serving: it ignores a stray .env or bunfig.toml in
// the directory it is started from, and its SHA256SUMS lists every executable and verifies.
// The cross builds themselves (TARGETS="linux-x64-baseline linux-arm64" bash build.sh) take
// minutes and download runtimes, so only the checksum step runs here.
import { beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cleanEnv, isolatedBinary, startBinary } from "../support/binary.ts";

const CHECKSUMS = resolve(import.meta.dir, "../../.ci/checksums.sh");
let bin: { dir: string; path: string };
beforeAll(() => {
  bin = isolatedBinary();
});

describe("a stray .env or bunfig.toml where the executable starts", () => {
  test("is not loaded", async () => {
    writeFileSync(join(bin.dir, ".env"), "PRODUCT_COST_API_KEYS=key-from-dotenv\nLOG_FORMAT=pretty\n");
    writeFileSync(join(bin.dir, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    writeFileSync(join(bin.dir, "preload.ts"), `require("node:fs").writeFileSync(${JSON.stringify(join(bin.dir, "preloaded"))}, "yes");\n`);
    const server = await startBinary(bin.path, { DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere" }, [], bin.dir);
    try {
      // JSON lines (LOG_FORMAT from .env ignored) and no key (PRODUCT_COST_API_KEYS from .env ignored).
      expect(server.lines.find((l) => l.msg === "listening")).toMatchObject({ api_keys: 0 });
      const res = await fetch(server.url + "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-01", {
        headers: { authorization: "Bearer key-from-dotenv" },
      });
      expect([res.status, await res.text()]).toEqual([503, '{"detail":"EXTERNAL_API_NOT_CONFIGURED"}']);
      expect(existsSync(join(bin.dir, "preloaded"))).toBe(false);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe(".ci/checksums.sh (the last step of a release build)", () => {
  const sha256 = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");
  const run = (dir: string, ...extra: string[]) => {
    const r = Bun.spawnSync(["bash", CHECKSUMS, dir, ...extra], { env: cleanEnv(), stdout: "pipe", stderr: "pipe" });
    return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
  };

  test("lists every executable, not the source maps, in the format sha256sum -c reads", () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-release-"));
    copyFileSync(bin.path, join(dir, "product-cost-export"));
    writeFileSync(join(dir, "product-cost-export-linux-arm64"), "stand-in for a cross build\n");
    writeFileSync(join(dir, "product-cost-export.map"), "{}\n");
    writeFileSync(join(dir, "worker.js.map"), "{}\n");
    expect(run(dir)).toEqual({
      code: 0,
      stdout: `checksums.sh: ${dir}/SHA256SUMS lists 2 executable(s): product-cost-export product-cost-export-linux-arm64\n`,
      stderr: "",
    });
    expect(readFileSync(join(dir, "SHA256SUMS"), "utf8")).toBe(
      `${sha256(join(dir, "product-cost-export"))}  product-cost-export\n` +
        `${sha256(join(dir, "product-cost-export-linux-arm64"))}  product-cost-export-linux-arm64\n`,
    );

    // What an operator runs after downloading: a file changed on the way fails the check.
    const check = () => Bun.spawnSync(["sha256sum", "-c", "SHA256SUMS"], { cwd: dir, stdout: "pipe", stderr: "pipe" }).exitCode;
    expect(check()).toBe(0);
    writeFileSync(join(dir, "product-cost-export-linux-arm64"), "tampered\n");
    expect(check()).toBe(1);
  }, 30_000); // hashes the 147 MB executable four times: about 5 s on a busy 2-core machine

  test("fails when there is nothing to list", () => {
    const dir = mkdtempSync(join(tmpdir(), "pce-release-empty-"));
    expect(run(dir)).toEqual({ code: 1, stdout: "", stderr: `checksums.sh: no product-cost-export executable in ${dir}\n` });
  });
});
