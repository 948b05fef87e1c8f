// The walks name real files (issue 45): sql/README.md names every statement of the refresh, and
// each file it names exists; docs/architecture.md's walk and code map name files that exist. A
// file renamed or removed fails here, not in a reader's hands.

import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const sqlFiles = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sqlFiles(`${dir}/${e.name}`) : e.name.endsWith(".sql") ? [e.name] : []));

test("sql/README.md names every file of sql/refresh/ and sql/migrate/, and only files that exist", () => {
  const readme = readFileSync(join(ROOT, "sql/README.md"), "utf8");
  const named = new Set([...readme.matchAll(/`([a-z0-9_-]+\.sql)`/g)].map((m) => m[1]!));
  const existing = new Set(sqlFiles("sql"));
  expect([...named].filter((n) => !existing.has(n))).toEqual([]);
  for (const dir of ["sql/refresh", "sql/migrate"]) {
    const files = readdirSync(join(ROOT, dir)).filter((f) => f.endsWith(".sql"));
    expect({ dir, unnamed: files.filter((f) => !named.has(f)) }).toEqual({ dir, unnamed: [] });
  }
});

test("docs/architecture.md names only source and SQL files that exist", () => {
  const doc = readFileSync(join(ROOT, "docs/architecture.md"), "utf8");
  const paths = new Set([...doc.matchAll(/`((?:src|sql|tests)\/[A-Za-z0-9_./-]+\.(?:ts|sql))`/g)].map((m) => m[1]!));
  expect(paths.size).toBeGreaterThan(20);
  expect([...paths].filter((p) => !existsSync(join(ROOT, p)))).toEqual([]);
});
