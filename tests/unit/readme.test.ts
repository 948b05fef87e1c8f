// The README is the user's manual: every setting the executable reads is documented there.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { SETTINGS } from "../../src/config.ts";

const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");

test.each(SETTINGS.map((s) => [s.env, s.flag] as const))("the README's configuration table documents %s", (env, flag) => {
  const row = readme.split("\n").find((line) => line.startsWith(`| \`${env}\` |`));
  expect(row).toBeDefined();
  if (flag) expect(row).toContain(`\`--${flag}\``);
});
