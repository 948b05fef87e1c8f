// The imports of src/ stay a ladder (issue 54): no file imports itself through others, and
// no folder of src/ imports one that imports it back (type imports count: they tie the code
// the same way). A cycle found here is named with the imports that make it.

import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(`${dir}/${e.name}`) : e.name.endsWith(".ts") ? [`${dir}/${e.name}`] : [],
  );
}

/** Each file of src/ and the files of src/ it imports (relative imports of .ts files). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles("src")) {
    const text = readFileSync(join(ROOT, file), "utf8");
    const targets = [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+\.ts)"/gms)].map((m) => relative(ROOT, resolve(dirname(join(ROOT, file)), m[1]!)));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected parts of more than one node (Tarjan's algorithm). */
function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const part: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        part.push(w);
      } while (w !== v);
      if (part.length > 1) found.push(part.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** The folder of src/ a file stands in (src/reads), or the file itself at the top (src/main.ts). */
const folderOf = (file: string) => file.split("/").slice(0, 2).join("/");

test("no file of src/ imports itself through others", () => {
  const graph = importGraph();
  expect(graph.size).toBeGreaterThan(50);
  const shown = cycles(graph).map((part) => part.flatMap((a) => graph.get(a)!.filter((b) => part.includes(b)).map((b) => `${a} -> ${b}`)));
  expect(shown).toEqual([]);
});

test("no folder of src/ imports a folder that imports it back", () => {
  const files = importGraph();
  const folders = new Map<string, string[]>();
  const why = new Map<string, string>();
  for (const [file, targets] of files) {
    const from = folderOf(file);
    for (const target of targets) {
      const to = folderOf(target);
      if (to === from) continue;
      folders.set(from, [...new Set([...(folders.get(from) ?? []), to])]);
      why.set(`${from} -> ${to}`, `${file} -> ${target}`);
    }
  }
  expect(folders.size).toBeGreaterThan(5);
  const shown = cycles(folders).map((part) => part.flatMap((a) => folders.get(a)!.filter((b) => part.includes(b)).map((b) => why.get(`${a} -> ${b}`)!)));
  expect(shown).toEqual([]);
});
