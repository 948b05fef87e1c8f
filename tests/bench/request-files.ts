// Which files of src/ run code for one request (issue 54's target: ≤ 20 files for a computed
// 200). Not part of `bun test`:
//
//   bun tests/bench/request-files.ts [--kind 200|401]
//
// Runs tests/bench/request-files.probe.ts twice under `bun test --coverage` (lcov): once with a
// warm-up only, once with the warm-up and the measured request. A file ran code for the request
// when any of its lines ran more often in the second run: module start-up, the assembly and the
// warm-up count the same in both, so they cancel. Lists the files and their count. Uses
// TEST_DATABASE_URL's server (the local one by default), as the suite does.

import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");
const kind = process.argv.includes("--kind") ? process.argv[process.argv.indexOf("--kind") + 1]! : "200";

/** Per src/ file, per line, how many times it ran (lcov's DA records). */
function linesRun(request: boolean): Map<string, Map<number, number>> {
  const dir = mkdtempSync(join(tmpdir(), "request-files-"));
  const run = Bun.spawnSync(
    [process.execPath, "test", "--coverage", "--coverage-reporter=lcov", `--coverage-dir=${dir}`, "./tests/bench/request-files.probe.ts"],
    { cwd: ROOT, env: { ...process.env, PROBE_REQUEST: request ? "1" : "0", PROBE_KIND: kind }, stdout: "pipe", stderr: "pipe" },
  );
  if (run.exitCode !== 0) throw new Error(`the probe failed:\n${run.stderr.toString()}`);
  const files = new Map<string, Map<number, number>>();
  let current: Map<number, number> | undefined;
  for (const line of readFileSync(join(dir, "lcov.info"), "utf8").split("\n")) {
    if (line.startsWith("SF:")) {
      const file = line.slice(3).replace(`${ROOT}/`, "");
      current = file.startsWith("src/") ? new Map() : undefined;
      if (current) files.set(file, current);
    } else if (line.startsWith("DA:") && current) {
      const [n, count] = line.slice(3).split(",").map(Number);
      current.set(n!, count!);
    }
  }
  return files;
}

const before = linesRun(false);
const after = linesRun(true);
const ran = [...after].filter(([file, lines]) => [...lines].some(([n, count]) => count > (before.get(file)?.get(n) ?? 0))).map(([file]) => file).sort();
console.log(`# Files of src/ that ran code for one ${kind === "401" ? "401" : "computed 200"} (${ran.length})\n`);
for (const file of ran) console.log(`- ${file}`);
