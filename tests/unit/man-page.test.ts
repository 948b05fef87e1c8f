// product-cost-export(1) as `man-page` prints it (src/cli/man-page.ts): roff that says every
// command, flag and setting of the tables --help is made from, with text that roff would
// otherwise read as requests or escapes written literally. (The .deb's page is checked with
// man itself in tests/e2e/deb-contents.test.ts.)
import { expect, test } from "bun:test";
import { COMMANDS } from "../../src/cli/commands.ts";
import { manPage, roffEscape } from "../../src/cli/man-page.ts";
import { SETTINGS } from "../../src/settings/config.ts";
import { STAGED_FILES } from "../../src/ops/units.ts";

const page = manPage(COMMANDS, SETTINGS, "1.2.3", "2026-12-03");
const lines = page.split("\n");

test("roffEscape: a backslash is \\e, a hyphen \\-, a line starting with . or ' starts with \\&", () => {
  expect(roffEscape("C:\\dir")).toBe("C:\\edir");
  expect(roffEscape("--dry-run")).toBe("\\-\\-dry\\-run");
  expect(roffEscape(".deb installs")).toBe("\\&.deb installs");
  expect(roffEscape("'quoted' then\n.TH no\nmid.dot")).toBe("\\&'quoted' then\n\\&.TH no\nmid.dot");
});

test("the page: a comment, then .TH with the version and the date, then NAME to SEE ALSO in order", () => {
  expect(lines[0]).toStartWith('.\\" product-cost-export(1)');
  expect(lines[1]).toBe('.TH PRODUCT\\-COST\\-EXPORT 1 "2026-12-03" "product\\-cost\\-export 1.2.3" "User Commands"');
  const sections = lines.filter((l) => l.startsWith(".SH ")).map((l) => l.slice(4));
  expect(sections).toEqual(["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "SETTINGS", "EXIT STATUS", "FILES", "SEE ALSO"]);
  expect(lines[lines.indexOf(".SH NAME") + 1]).toBe("product\\-cost\\-export \\- read\\-only HTTP API of product costs over a date range");
});

test("every command is an entry with its arguments, and every own flag of it an entry beneath", () => {
  for (const command of COMMANDS) {
    const entry = lines.findIndex((l, i) => lines[i - 1] === ".TP" && l.startsWith(`\\fB${roffEscape(command.name)}\\fR`));
    expect([command.name, entry > 0]).toEqual([command.name, true]);
    for (const flag of command.own ?? []) expect(page).toContain(`.TP\n\\fB\\-\\-${roffEscape(flag.flag)}\\fR`);
  }
  expect(page).toContain(".TP\n\\fBload\\-csv\\fR \\fI<products|product_daily_costs> <file.csv|\\->\\fR \\fI[flags]\\fR\n");
  expect(page).toContain(".TP\n\\fBman\\-page\\fR\nPrint the manual page product\\-cost\\-export(1) in roff");
});

test("every setting is an entry: its variable, its flag (none for a secret), its default and the commands that read it", () => {
  for (const s of SETTINGS) {
    const head = `\\fB${roffEscape(s.env)}\\fR` + (s.flag ? `, \\fB\\-\\-${roffEscape(s.flag)}\\fR \\fI${s.kind === "bool" ? "[true|false]" : "<value>"}\\fR` : "");
    const at = lines.indexOf(head);
    expect([s.env, at > 0 && lines[at - 1] === ".TP"]).toEqual([s.env, true]);
    const facts = lines.slice(at, lines.indexOf(".TP", at + 1)).join("\n");
    expect(facts).toContain(`Default: ${roffEscape(s.default === undefined ? "unset" : String(s.default))}. Read by: ${roffEscape(s.commands.join(", "))}.`);
  }
  expect(page).toContain(".TP\n\\fBPRODUCT_COST_API_KEYS\\fR\n");
  for (const [source] of STAGED_FILES) expect(page).toContain(`\\fB/etc/product\\-cost\\-export/${roffEscape(source)}\\fR`);
});

test("no text line starts with a control character or holds an unescaped hyphen or backslash", () => {
  const text = lines.filter((l) => !l.startsWith(".") && l !== "");
  expect(text.filter((l) => l.startsWith("'"))).toEqual([]);
  // A hyphen is always \- ; a backslash starts an escape this generator writes (\-, \e, \&, \f, \h).
  expect(text.filter((l) => /(^|[^\\])-/.test(l))).toEqual([]);
  expect(text.filter((l) => /\\(?![-e&fh])/.test(l.replace(/\\\\/g, "")))).toEqual([]);
  expect(page).toEndWith("\n");
});

test("`man-page` prints it: the command's row runs manPage over the tables", () => {
  const chunks: string[] = [];
  const write = process.stdout.write;
  process.stdout.write = ((chunk: string) => chunks.push(chunk) > 0) as typeof process.stdout.write;
  try {
    void COMMANDS.find((c) => c.name === "man-page")!.run({ config: undefined as never, own: new Map(), args: [] }, undefined as never);
  } finally {
    process.stdout.write = write;
  }
  expect(chunks.join("")).toBe(manPage(COMMANDS, SETTINGS, "dev", ""));
});
