// The e2e tests run dist/product-cost-export: they refuse one older than its sources.

import { expect, test } from "bun:test";
import { utimesSync, statSync } from "node:fs";
import { BINARY, builtBinary, newestSource } from "../support/binary.ts";

test("an executable older than a source is refused, naming the source and the fix", () => {
  const newest = newestSource();
  expect(newest.file).toMatch(/^(src|sql)\/|^(package\.json|bun\.lock|build\.sh)$/);
  const built = statSync(BINARY);
  try {
    utimesSync(BINARY, built.atime, new Date(newest.mtimeMs - 60_000));
    expect(() => builtBinary()).toThrow(`${BINARY} is older than ${newest.file}: run \`bash build.sh\` (or \`bash build.sh test\`)`);
  } finally {
    utimesSync(BINARY, built.atime, built.mtime);
  }
  expect(builtBinary()).toBe(BINARY);
});
