// The edge store (src/reads/edges/edge-store.ts): bounded in bytes, least recently used out, and never
// mixing the numbers of two sets of slots.
import { expect, test } from "bun:test";
import { catalogueOf, edgeOf, rangeRows } from "../../src/reads/edges/range-read.ts";
import { EdgeStore, edgeBytes, emptyEdge } from "../../src/reads/edges/edge-store.ts";

const bytes = (s: string | null) => (s === null ? null : Buffer.from(s));
/** The one row of arrays the edge statement returns, for these products. */
const edgeRow = (...products: [id: string, n: number, sums: string[], counts: number[]][]) => {
  const array = (values: (string | number)[]) => bytes(`{${values.join(",")}}`);
  return [
    array(products.map((p) => p[0])),
    array(products.map((p) => p[1])),
    ...[0, 1, 2, 3].flatMap((c) => [array(products.map((p) => p[2][c]!)), array(products.map((p) => p[3][c]!))]),
  ];
};

test("edges are held within the bound, the one used longest ago let go first; hits and misses counted", () => {
  const one = emptyEdge(1000);
  const size = edgeBytes(one);
  const store = new EdgeStore(size * 2); // (no slot given yet: the edges are all it holds)
  store.keepEdge("a", emptyEdge(1000), store.slots);
  store.keepEdge("b", emptyEdge(1000), store.slots);
  expect(store.edge("a")).toBeDefined(); // a is now the newest
  store.keepEdge("c", emptyEdge(1000), store.slots); // b goes
  expect([store.edge("a") !== undefined, store.edge("b") !== undefined, store.edge("c") !== undefined]).toEqual([true, false, true]);
  const stats = store.stats();
  expect(stats).toEqual({ limitBytes: size * 2, bytes: size * 2, edges: 2, hits: 3, misses: 1, catalogueHits: 0, catalogueMisses: 0 });
});

test("nothing larger than the bound is held, and 0 holds nothing", () => {
  const none = new EdgeStore(0);
  none.keepEdge("a", emptyEdge(1), none.slots);
  expect(none.edge("a")).toBeUndefined();
  expect(none.stats().bytes).toBe(0);
  const small = new EdgeStore(100);
  small.keepEdge("big", emptyEdge(1000), small.slots);
  expect(small.edge("big")).toBeUndefined();
});

test("once slots are given up, what a read made with the old ones is not kept", () => {
  const store = new EdgeStore(64 << 20);
  const old = store.slots;
  for (let i = 0; i < 2000; i++) old.of(Buffer.from(String(i))); // ids of products since gone
  const catalogue = catalogueOf([[bytes("7"), bytes("70"), bytes("SKU"), bytes("seven"), bytes("f")]], old);
  store.keepCatalogue("v1", catalogue, old);
  expect(store.catalogue("v1")).toBe(catalogue);
  store.compactIfSparse(); // 2,000 slots for one product: given up
  expect(store.slots).not.toBe(old);
  expect(store.catalogue("v1")).toBeUndefined();
  store.keepEdge("e", emptyEdge(10), old);
  store.keepCatalogue("v2", catalogue, old);
  expect([store.edge("e"), store.catalogue("v2")]).toEqual([undefined, undefined]);
});

test("a range's rows: through − before + outside, in the catalogue's order, the segment's, null where no value", () => {
  const store = new EdgeStore(1 << 20);
  const slots = store.slots;
  const catalogue = catalogueOf(
    [
      [bytes("2"), null, bytes("A"), bytes("two"), bytes("t")],
      [bytes("1"), bytes("10"), bytes("B"), null, bytes("f")],
      [bytes("3"), bytes("30"), null, bytes("three"), bytes("f")],
    ],
    slots,
  );
  const through = edgeOf(
    edgeRow(["1", 5, ["10.5", "0", "99999999999999.999999", "-1"], [5, 0, 5, 1]], ["2", 3, ["3", "3", "3", "3"], [3, 3, 3, 3]], ["3", 2, ["1", "1", "1", "1"], [2, 2, 2, 2]]),
    slots,
  );
  const before = edgeOf(edgeRow(["1", 2, ["0.5", "0", "-99999999999999.999999", "0"], [2, 0, 2, 0]], ["3", 2, ["1", "1", "1", "1"], [2, 2, 2, 2]]), slots);
  const outside = edgeOf(edgeRow(["2", 1, ["0.000001", "0", "0", "0"], [1, 0, 0, 0]]), slots);
  // No day in it: null arrays, nothing.
  expect(edgeOf(Array.from({ length: 10 }, () => null), slots).length).toBe(0);
  const text = (segment: "all" | "normal" | "sample") => [...rangeRows(catalogue, through, before, outside, segment, 1)].flat().map((r) => r.map((c) => (c === null ? null : Buffer.from(c).toString())));
  // Product 3 has nothing in the range (its rows all before it); product 1's freight has no value.
  expect(text("all")).toEqual([
    [null, "A", "two", "3.000001", "3", "3", "3"],
    ["10", "B", null, "10", null, "199999999999999.999998", "-1"],
  ]);
  expect(text("sample")).toEqual([[null, "A", "two", "3.000001", "3", "3", "3"]]);
  expect(text("normal")).toEqual([["10", "B", null, "10", null, "199999999999999.999998", "-1"]]);
});

test("holds() and holdsCatalogue() ask without counting or making an edge the newest: a plan is weighed before it is read", () => {
  const size = edgeBytes(emptyEdge(1000));
  const store = new EdgeStore(size * 2);
  store.keepEdge("a", emptyEdge(1000), store.slots);
  store.keepEdge("b", emptyEdge(1000), store.slots);
  expect([store.holds("a"), store.holds("b"), store.holds("c"), store.holdsCatalogue("v1")]).toEqual([true, true, false, false]);
  store.keepEdge("c", emptyEdge(1000), store.slots); // a, asked only through holds(), is still the oldest
  expect([store.holds("a"), store.holds("b"), store.holds("c")]).toEqual([false, true, true]);
  expect(store.stats()).toMatchObject({ hits: 0, misses: 0, catalogueHits: 0, catalogueMisses: 0 });
});
