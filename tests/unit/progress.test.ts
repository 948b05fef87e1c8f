import { describe, expect, test } from "bun:test";
import { heartbeat, indexBuildDetail, megabytes, progressLines } from "../../src/ops/progress.ts";

describe("progress on stderr", () => {
  test("not a terminal: whole lines, the share, an estimate, and always the line that ends a step", () => {
    const out: string[] = [];
    const p = progressLines("load-csv", { write: (t) => out.push(t), live: false, everyMs: 0, unit: megabytes });
    p.report("loading f.csv", 0, 4e6, "0 rows");
    p.report("loading f.csv", 1e6, 4e6, "5000 rows");
    p.report("loading f.csv", 4e6, 4e6, "20000 rows");
    p.finish();
    expect(out.map((l) => l.replace(/in \d+\.\d s/, "in T s").replace(/about \d+ s/, "about N s"))).toEqual([
      "load-csv: loading f.csv: 0% (0.0 MB of 4.0 MB) in T s, 0 rows\n",
      "load-csv: loading f.csv: 25% (1.0 MB of 4.0 MB) in T s, about N s left, 5000 rows\n",
      "load-csv: loading f.csv: 100% (4.0 MB of 4.0 MB) in T s, 20000 rows\n",
    ]);
  });

  test("quietWhenQuick, not a terminal: a step ended within everyMs writes nothing; a longer one its lines as before (the timer's refresh, issue 46)", async () => {
    const out: string[] = [];
    const p = progressLines("refresh", { write: (t) => out.push(t), live: false, everyMs: 50, quietWhenQuick: true });
    p.report("rendering", 1, 3);
    p.report("rendering", 3, 3);
    expect(out).toEqual([]);
    p.report("folding", 0, 2);
    await Bun.sleep(60);
    p.report("folding", 2, 2);
    expect(out.map((l) => l.replace(/in \d+\.\d s/, "in T s"))).toEqual(["refresh: folding: 100% (2 of 2) in T s\n"]);
  });

  test("lines in between come at most every everyMs; an unknown total shows the count alone", () => {
    const out: string[] = [];
    const p = progressLines("load-csv", { write: (t) => out.push(t), live: false, everyMs: 60_000, unit: (n) => `${n} rows` });
    for (let rows = 5000; rows <= 50_000; rows += 5000) p.report("loading stdin", rows, undefined);
    p.report("loading stdin", 50_000, 50_000);
    expect(out.map((l) => l.replace(/in \d+\.\d s/, "in T s"))).toEqual(["load-csv: loading stdin: 100% (50000 rows of 50000 rows) in T s\n"]);
  });

  test("a terminal: one line rewritten in place with a bar, ended by a line break", () => {
    const out: string[] = [];
    const p = progressLines("refresh", { write: (t) => out.push(t), live: true, everyMs: 0 });
    p.report("rendering", 1, 4);
    p.report("rendering", 4, 4);
    expect(out.map((l) => l.replace(/in \d+\.\d s/, "in T s").replace(/about \d+ s/, "about N s"))).toEqual([
      "\r\x1b[Krefresh: rendering: [######..................] 25% (1 of 4) in T s, about N s left",
      "\r\x1b[Krefresh: rendering: [########################] 100% (4 of 4) in T s\n",
    ]);
    p.report("other", 1, 2);
    p.finish();
    expect(out.at(-1)).toBe("\n"); // an interrupted live line is ended, so the next output starts clean
  });

  test("a heartbeat for a step that cannot be measured, until stopped", async () => {
    const out: string[] = [];
    const stop = heartbeat("migrate", "0005 rollup_v2", { write: (l) => out.push(l), everyMs: 20 });
    await Bun.sleep(70);
    stop();
    const seen = out.length;
    await Bun.sleep(50);
    expect(seen).toBeGreaterThanOrEqual(2);
    expect(out.length).toBe(seen);
    expect(out[0]).toBe("migrate: 0005 rollup_v2: still running after 0 s");
  });

  test("a heartbeat carries what the probe reports: an index build's phase and share", async () => {
    const out: string[] = [];
    const detail = indexBuildDetail({ command: "CREATE INDEX", phase: "building index: scanning table", blocksDone: 1200, blocksTotal: 2665, tuplesDone: 0, tuplesTotal: 0 });
    expect(detail).toBe("create index: building index: scanning table, 45% (blocks 1200 of 2665)");
    expect(indexBuildDetail({ command: "CREATE INDEX", phase: "building index: loading tuples in tree", blocksDone: 0, blocksTotal: 0, tuplesDone: 50, tuplesTotal: 200 })).toBe(
      "create index: building index: loading tuples in tree, 25% (rows 50 of 200)",
    );
    const stop = heartbeat("migrate", "0002 daily_costs_by_date", { write: (l) => out.push(l), everyMs: 20, probe: async () => detail });
    await Bun.sleep(50);
    stop();
    expect(out[0]).toBe(`migrate: 0002 daily_costs_by_date: still running after 0 s: ${detail}`);
  });

  test("a probe that cannot answer (the one session busy with the step) does not hold the heartbeat back", async () => {
    const out: string[] = [];
    const stop = heartbeat("migrate", "0005 rollup_v2", { write: (l) => out.push(l), everyMs: 20, probe: () => new Promise<string>(() => {}) });
    await Bun.sleep(1150);
    stop();
    expect(out[0]).toBe("migrate: 0005 rollup_v2: still running after 0 s");
  });
});
