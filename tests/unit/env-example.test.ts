// docs/env.example is every setting serve reads, at its default, as the settings table says
// (tests/support/env-example.ts makes it; the .deb installs it beside the README's step 4).
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { SETTINGS } from "../../src/settings/config.ts";
import { ENV_EXAMPLE, envExample } from "../support/env-example.ts";

test("docs/env.example is made from the settings table (bun tests/support/env-example.ts --write)", () => {
  expect(readFileSync(ENV_EXAMPLE, "utf8")).toBe(envExample());
});

test("every setting of serve is in it, commented out, and nothing else is set", () => {
  const text = readFileSync(ENV_EXAMPLE, "utf8");
  for (const s of SETTINGS.filter((s) => (s.commands as readonly string[]).includes("serve"))) {
    expect(text).toContain(`\n#${s.env}=`);
  }
  expect(text.split("\n").filter((l) => l !== "" && !l.startsWith("#"))).toEqual([]);
});
