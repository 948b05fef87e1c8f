// The e2e tests run dist/product-cost-export: they refuse one older than its sources.

import { expect, test } from "bun:test";
import { mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtBinary, newestSource } from "../support/binary.ts";

test("an executable older than a source is refused, naming the source and the fix; a newer one is taken", () => {
  const newest = newestSource();
  expect(newest.file).toMatch(/^(src|sql)\/|^(package\.json|bun\.lock|build\.sh)$/);
  const path = join(mkdtempSync(join(tmpdir(), "pce-stale-")), "product-cost-export");
  writeFileSync(path, "");
  utimesSync(path, new Date(), new Date(newest.mtimeMs - 60_000));
  expect(() => builtBinary(path)).toThrow(`${path} is older than ${newest.file}: run \`bash build.sh\` (or \`bash build.sh test\`)`);
  utimesSync(path, new Date(), new Date(newest.mtimeMs + 1000));
  expect(builtBinary(path)).toBe(path);
  expect(() => builtBinary(join(path, "missing"))).toThrow("is missing: run `bash build.sh` first");
});
