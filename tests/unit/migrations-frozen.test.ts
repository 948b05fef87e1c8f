// A released migration's text never changes (issue 54's move rewrote paths in their comments,
// and every database migrated before it then refused to start: `migrate` records each
// migration's checksum in schema_migrations and refuses one whose SQL changed since). A change
// to the schema is a new migration; a comment that names a moved file stays as it was.

import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { MIGRATIONS } from "../../src/rollup/migrations.ts";

// sha256 of each migration's SQL as released; a new migration adds its line.
const RELEASED: [string, string][] = [
  ["0001_contract_tables", "b37cf7b98af589493b1783882d55e3faa8876fcda8807ac31de4c842e36b1894"],
  ["0002_daily_costs_by_date", "560af6e6b65129681442857a5bbe6f2353b789a7904d3865c0c3525c9dca50c1"],
  ["0003_period_cost_rollup", "c1688b46e7b5f4445d799ed10e2297873c32bcf9412d734e0a882290ff78b7a1"],
  ["0004_rollup_in_output_order", "9cb2dd96a0fb46ac47fe114d5ccc7e249fd1e0ad89bd94436d98151f9a2d8286"],
  ["0005_rollup_v2", "fe50c91ff5bb2d3d012812043349a8eee8b3a48924da7815066708ce0949b05d"],
  ["0006_rollup_v3", "ab5423c4f5c738ffc8dd7c86b8820f0fb885922afb60bd21c8c3d7f6c2c3c924"],
  ["0007_answer_versions", "3589ebb93379a7ce21261f9a97547482c0ec92766b9e54808116903e02fe1768"],
  ["0008_refresh_record", "3165e0a9388db17ae22ade87a1ad58337a36a5f3b3ae76a5ceb8024a73deadaa"],
  ["0009_answer_version_function", "1cf0035aa8cac1452a4ef18a1e42d38b5b953e9fbe9c8d3fc146dc840a7bfd65"],
  ["0010_single_row_notes", "e6e06034d54c27723dad28fab76b00d058a774df951759f14f30e3ce47221e00"],
  ["0011_months_by_month", "fcb662a53eaba0553f5ff1eb1450bacf82a4b26561977c7c0326d11b9e7adf6b"],
  ["0012_notes_of_any_date", "daf9946abf0a7e478687376387f2656183ff6f8dd97414532e055e74771ea781"],
  ["0013_months_window", "39261fc84220485f14379f043dd54265958ea673e377568cd5bffccd6338d3ea"],
  ["0014_notes_always", "c24d9dc784d01581a2d9152661a01616aca2ea82eefabfd508e10959059619d3"],
];

test("every released migration's SQL is byte for byte what databases recorded when they applied it", () => {
  const now = MIGRATIONS.slice(0, RELEASED.length).map((m) => [`${m.version}_${m.name}`, createHash("sha256").update(m.sql).digest("hex")]);
  expect(now).toEqual(RELEASED);
});
