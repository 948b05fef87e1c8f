// What the .deb holds, without installing it (the real-systemd test installs it): the package
// .ci/package-deb.sh makes of the built executable, read with dpkg-deb -c, -I, -e and -x.
// Exactly these files; DEBIAN/md5sums for each; the manual page the executable prints, which
// man renders without a warning; the units with Documentation=; the README and docs/ as in the
// tree, their links holding where they are installed; a changelog dpkg-parsechangelog reads,
// one entry of the commits since the last release tag; a DEP-5 copyright. Needs dpkg-deb
// (and dpkg-parsechangelog, man): Debian's own tools, which the package is made with.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize, resolve } from "node:path";
import { gunzipSync } from "node:zlib";
import { COMMANDS } from "../../src/cli/commands.ts";
import { SETTINGS } from "../../src/settings/config.ts";
import { builtBinary } from "../support/binary.ts";

const ROOT = resolve(import.meta.dir, "../..");
const VERSION = "0.0.0";
const DOC = "usr/share/doc/product-cost-export";
const DOCS_MD = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort();
const work = mkdtempSync(join(tmpdir(), "pce-deb-contents-"));
const deb = join(work, `product-cost-export_${VERSION}_amd64.deb`);
const tree = join(work, "tree");
const control = join(work, "DEBIAN");
let binary = "";

function sh(args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): string {
  const r = Bun.spawnSync(args, { cwd: options.cwd ?? ROOT, env: { ...process.env, ...options.env }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`${args.join(" ")} failed (${r.exitCode}): ${r.stderr.toString()}`);
  return r.stdout.toString();
}
const file = (path: string) => readFileSync(join(tree, path));

beforeAll(() => {
  binary = builtBinary();
  sh(["bash", ".ci/package-deb.sh", binary, "amd64", VERSION, work], { env: { DEB_COMPRESSION: "gzip" } });
  sh(["dpkg-deb", "-x", deb, tree]);
  sh(["dpkg-deb", "-e", deb, control]);
}, 240_000);
afterAll(() => rmSync(work, { recursive: true, force: true }));

test("dpkg-deb -c: exactly the executable, the units, the manual page, the docs and the overrides, owned by root", () => {
  const entries = sh(["dpkg-deb", "-c", deb]).trimEnd().split("\n").map((l) => l.split(/\s+/));
  expect(new Set(entries.map((e) => e[1]))).toEqual(new Set(["root/root"]));
  const paths = entries.filter((e) => !e[0]!.startsWith("d")).map((e) => e.slice(5).join(" ").replace(/^\.\//, "")).sort();
  expect(paths).toEqual(
    [
      "lib/systemd/system/product-cost-export-refresh.service",
      "lib/systemd/system/product-cost-export-refresh.timer",
      "lib/systemd/system/product-cost-export.service",
      "usr/bin/product-cost-export",
      `${DOC}/README.md`,
      `${DOC}/changelog.gz`,
      `${DOC}/copyright`,
      ...DOCS_MD.map((f) => `${DOC}/docs/${f}`),
      `${DOC}/docs/monitoring -> ../monitoring`,
      `${DOC}/env.example`,
      `${DOC}/monitoring/alerts.yml`,
      `${DOC}/monitoring/grafana-dashboard.json`,
      "usr/share/lintian/overrides/product-cost-export",
      "usr/share/man/man1/product-cost-export.1.gz",
    ].sort(),
  );
  const modes = Object.fromEntries(entries.filter((e) => e[0]!.startsWith("-")).map((e) => [e[5]!.replace(/^\.\//, ""), e[0]]));
  expect(modes["usr/bin/product-cost-export"]).toBe("-rwxr-xr-x");
  expect(Object.entries(modes).filter(([path, mode]) => path !== "usr/bin/product-cost-export" && mode !== "-rw-r--r--")).toEqual([]);
});

test("DEBIAN/md5sums: one line per regular file, each the file's MD5, as dh_md5sums writes it", () => {
  expect(readdirSync(control).sort()).toEqual(["control", "md5sums", "postinst", "postrm", "prerm"]);
  const lines = readFileSync(join(control, "md5sums"), "utf8").trimEnd().split("\n");
  const listed = lines.map((l) => {
    const m = /^([0-9a-f]{32})  (\S.*)$/.exec(l);
    expect(m).not.toBeNull();
    return [m![2]!, m![1]!] as const;
  });
  const regular = sh(["find", ".", "-type", "f", "-printf", "%P\\n"], { cwd: tree }).trimEnd().split("\n").sort();
  expect(listed.map(([path]) => path)).toEqual(regular);
  for (const [path, sum] of listed) expect([path, createHash("md5").update(file(path)).digest("hex")]).toEqual([path, sum]);
});

test("dpkg-deb -I: the control fields, an Installed-Size that counts the files", () => {
  const info = sh(["dpkg-deb", "-f", deb, "Package", "Version", "Architecture", "Depends", "Section"]);
  expect(info).toBe(`Package: product-cost-export\nVersion: ${VERSION}\nArchitecture: amd64\nDepends: libc6 (>= 2.27), systemd (>= 247)\nSection: net\n`);
  const installed = Number(sh(["dpkg-deb", "-f", deb, "Installed-Size"]).trim());
  expect(installed).toBe(Number(sh(["du", "-sk", "."], { cwd: tree }).split("\t")[0]));
  expect(sh(["dpkg-deb", "-I", deb])).toContain(" md5sums");
});

test("the manual page: the roff `man-page` prints, gzipped, naming every command and every setting's variable", () => {
  const page = gunzipSync(file("usr/share/man/man1/product-cost-export.1.gz")).toString("utf8");
  expect(page).toBe(sh([binary, "man-page"]));
  const lines = page.split("\n");
  expect(lines[0]).toStartWith('.\\" ');
  expect(lines[1]).toMatch(/^\.TH PRODUCT\\-COST\\-EXPORT 1 "\d{4}-\d{2}-\d{2}" "product\\-cost\\-export \d+\.\d+\.\d+" "User Commands"$/);
  for (const c of COMMANDS) expect(page).toContain(`.TP\n\\fB${c.name.replaceAll("-", "\\-")}\\fR`);
  for (const s of SETTINGS) expect(page).toContain(`.TP\n\\fB${s.env}\\fR`);
});

test("man renders the installed page without a warning, every command and setting in the text", () => {
  // man-db's man (Debian's): its absence is a failure here, not a skip.
  expect(Bun.which("man")).not.toBeNull();
  const r = Bun.spawnSync(["man", "--warnings", "-l", join(tree, "usr/share/man/man1/product-cost-export.1.gz")], {
    env: { ...process.env, MANWIDTH: "100", MAN_KEEP_FORMATTING: "", MANPAGER: "cat", PAGER: "cat" },
    stdout: "pipe",
    stderr: "pipe",
  });
  const text = r.stdout.toString().replace(/.\x08/g, "");
  expect([r.exitCode, r.stderr.toString()]).toEqual([0, ""]);
  expect(text.split("\n")[0]).toMatch(/^PRODUCT-COST-EXPORT\(1\) +User Commands +PRODUCT-COST-EXPORT\(1\)$/);
  for (const c of COMMANDS) expect(text).toContain(`\n       ${c.name}`);
  for (const s of SETTINGS) expect(text).toContain(`\n       ${s.env}${s.flag ? `, --${s.flag} ` : "\n"}`);
});

test("the units: as `systemd-unit` prints them for /usr/bin/product-cost-export, each with Documentation= to the page and the README", () => {
  for (const [kind, name] of [["service", "product-cost-export.service"], ["refresh", "product-cost-export-refresh.service"], ["refresh-timer", "product-cost-export-refresh.timer"]] as const) {
    const text = file(`lib/systemd/system/${name}`).toString("utf8");
    expect(text).toBe(sh([binary, "systemd-unit", kind, ...(kind === "refresh-timer" ? [] : ["--exec-path", "/usr/bin/product-cost-export"])]));
    expect([name, text.split("\n").filter((l) => l.startsWith("Documentation="))]).toEqual([
      name,
      ["Documentation=man:product-cost-export(1) file:/usr/share/doc/product-cost-export/README.md"],
    ]);
  }
  expect(existsSync(join(tree, DOC, "README.md"))).toBe(true); // the file: the units name
});

test("the README, docs/*.md, env.example and the monitoring files as in the tree; the README's links reach installed files", () => {
  for (const [installed, source] of [["README.md", "README.md"], ["env.example", "docs/env.example"], ["monitoring/alerts.yml", "docs/monitoring/alerts.yml"], ["monitoring/grafana-dashboard.json", "docs/monitoring/grafana-dashboard.json"], ...DOCS_MD.map((f) => [`docs/${f}`, `docs/${f}`])]) {
    expect([installed, file(`${DOC}/${installed}`).equals(readFileSync(join(ROOT, source!)))]).toEqual([installed, true]);
  }
  expect(lstatSync(join(tree, DOC, "docs/monitoring")).isSymbolicLink()).toBe(true);
  // Each relative link, resolved where the file is installed. The docs' links into the source
  // tree's tests/ and sql/ (benchmark results, sql/README.md) are to files the package does not carry.
  const unreached: string[] = [];
  for (const page of ["README.md", ...DOCS_MD.map((f) => `docs/${f}`)]) {
    const text = file(`${DOC}/${page}`).toString("utf8");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const path = target!.split("#")[0]!;
      if (/^[a-z]+:/.test(target!) || path === "") continue;
      const resolved = normalize(join(dirname(page), path));
      if (!existsSync(join(tree, DOC, resolved))) unreached.push(`${page}: ${resolved}`);
    }
  }
  expect(unreached.filter((u) => !/^docs\/[\w-]+\.md: (tests\/bench\/results\/[\w.-]+\.md|sql\/README\.md)$/.test(u))).toEqual([]);
  expect(unreached.filter((u) => u.startsWith("README.md:"))).toEqual([]);
});

test("the changelog: Debian's format, this version, one entry of the commits' subjects since the last release tag", () => {
  const changelog = gunzipSync(file(`${DOC}/changelog.gz`)).toString("utf8");
  writeFileSync(join(work, "changelog"), changelog);
  const parsed = sh(["dpkg-parsechangelog", "-l", join(work, "changelog")]);
  expect(parsed).toContain(`\nVersion: ${VERSION}\n`);
  expect(parsed).toStartWith("Source: product-cost-export\n");
  expect(sh(["dpkg-parsechangelog", "-l", join(work, "changelog"), "--count", "2", "-S", "Version"]).trim()).toBe(VERSION); // one entry
  const since = Bun.spawnSync(["git", "describe", "--tags", "--abbrev=0", "--match", "v[0-9]*", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "pipe" });
  const range = since.exitCode === 0 ? [`${since.stdout.toString().trim()}..HEAD`] : [];
  const subjects = sh(["git", "log", "--no-merges", "--format=%s", ...range]).trimEnd().split("\n");
  const bullets = changelog.split("\n").filter((l) => l.startsWith("  * "));
  expect(bullets.length).toBe(subjects.length);
  // Each bullet is its subject, wrapped to 80 columns: the continuation lines joined back give it.
  const entries = changelog.split("\n  * ").slice(1).map((e) => e.split("\n\n -- ")[0]!.split("\n    ").join(" "));
  expect(entries[0]).toBe(subjects[0]!.replace(/\s+$/, ""));
  expect(changelog.split("\n").filter((l) => l.length > 80 && !l.startsWith(" -- "))).toEqual([]);
  expect(changelog).toMatch(/\n -- product-cost-export maintainers <product-cost-export@example\.org>  \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} [+-]\d{4}\n$/);
});

test("the copyright: DEP-5, a Copyright: notice with its year for the service's files, every license it names given", () => {
  const text = file(`${DOC}/copyright`).toString("utf8");
  expect(text).toStartWith("Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n");
  const paragraphs = text.trimEnd().split("\n\n").map((p) => p.split("\n"));
  const field = (p: string[], name: string) => p.find((l) => l.startsWith(`${name}: `))?.slice(name.length + 2);
  const files = paragraphs.filter((p) => field(p, "Files") !== undefined);
  expect(files.map((p) => [field(p, "Files"), field(p, "Copyright")])[0]).toEqual(["*", "2026 product-cost-export authors"]);
  for (const p of files) expect([field(p, "Files"), field(p, "Copyright")]).toEqual([field(p, "Files"), expect.stringMatching(/^\d{4}/)]);
  const named = new Set(files.flatMap((p) => field(p, "License")!.split(/ (?:and|or) /)));
  const given = new Set(paragraphs.filter((p) => p[0]!.startsWith("License: ") && p.length > 1).map((p) => field(p, "License")!));
  expect([...named].filter((l) => !given.has(l) && l !== "proprietary")).toEqual([]);
  expect([...given].filter((l) => !named.has(l))).toEqual([]);
});
