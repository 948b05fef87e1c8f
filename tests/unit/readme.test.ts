// The README is the user's manual: every setting the executable reads is documented there.
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { SETTINGS } from "../../src/settings/config.ts";

const readme = readFileSync(resolve(import.meta.dir, "../../README.md"), "utf8");

test.each(SETTINGS.map((s) => [s.env, s.flag] as const))("the README's configuration table documents %s", (env, flag) => {
  const row = readme.split("\n").find((line) => line.startsWith(`| \`${env}\` |`));
  expect(row).toBeDefined();
  if (flag) expect(row).toContain(`\`--${flag}\``);
});

test("the README is the operator's manual: at most 20 KB, a table of contents first, the two commands", () => {
  expect(Buffer.byteLength(readme)).toBeLessThanOrEqual(20 * 1024);
  const firstHeading = readme.indexOf("\n## ");
  expect(readme.indexOf("**Contents**")).toBeGreaterThan(0);
  expect(readme.indexOf("**Contents**")).toBeLessThan(firstHeading);
  for (const command of ["bash build.sh && PRODUCT_COST_API_KEYS=demo-key ./dist/product-cost-export", "bash build.sh test"]) {
    expect(readme).toContain("```sh\n" + command + "\n```");
  }
});

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

test("every relative link of the README and docs/ reaches a file, and its anchor a heading there", () => {
  const root = resolve(import.meta.dir, "../..");
  const files = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
  const anchorsOf = (file: string) => {
    const text = readFileSync(join(root, file), "utf8");
    const headings = [...text.matchAll(/^#+ (.+)$/gm)].map((m) => slug(m[1]!));
    const explicit = [...text.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
    return new Set([...headings, ...explicit]);
  };
  const broken: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(root, file), "utf8");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target!)) continue; // https:, mailto:
      const [path, anchor] = target!.split("#");
      const resolved = path ? join(dirname(file), path) : file;
      if (!existsSync(join(root, resolved))) broken.push(`${file}: ${target} (no such file)`);
      else if (anchor && resolved.endsWith(".md") && !anchorsOf(resolved).has(anchor)) broken.push(`${file}: ${target} (no such heading)`);
    }
  }
  expect(broken).toEqual([]);
});
