// The encode stage's CPU per format (issue 55, part 1): 50,000 rows shaped as the bench
// dataset's (ids, SKUs, names, four amounts with up to 6 decimals, a null in one of ten), in
// batches of the read's size, through the JSON, CSV and Arrow encoders; median of 15 runs.
//   bun tests/bench/arrow-encode.ts [rows] [batch]
import { arrowStream } from "../../src/body/arrow.ts";
import { CSV_TABLE, JSON_ARRAY, type RowEncoding } from "../../src/body/encode.ts";
import type { ProductCostRow } from "../../src/reads/answer-rows.ts";

const rows = Number(process.argv[2] ?? 50_000);
const batch = Number(process.argv[3] ?? 1_000);
const e = new TextEncoder();
const amount = (i: number) => (i % 10 === 0 ? null : e.encode(`${(i * 7919) % 100000}.${String((i * 31) % 1000000).padStart(6, "0").replace(/0+$/, "") || "0"}`.replace(/\.$/, "")));
const all: ProductCostRow[] = Array.from({ length: rows }, (_, i) => [
  e.encode(String(100000 + i)),
  e.encode(`SKU-${String(i).padStart(6, "0")}`),
  e.encode(`Product ${i} (normal)`),
  amount(i),
  amount(i + 1),
  amount(i + 2),
  amount(i + 3),
]);
const batches: ProductCostRow[][] = [];
for (let i = 0; i < rows; i += batch) batches.push(all.slice(i, i + batch));

function encode(encoding: RowEncoding): number {
  let bytes = encoding.begin(batches[0]!).length;
  let written = batches[0]!.length;
  for (const b of batches.slice(1)) {
    bytes += encoding.more(b, written).length;
    written += b.length;
  }
  return bytes + encoding.end.length;
}

for (const [name, make] of [["json", () => JSON_ARRAY], ["csv", () => CSV_TABLE], ["arrow", () => arrowStream() as RowEncoding]] as const) {
  const times: number[] = [];
  let size = 0;
  for (let run = 0; run < 15; run++) {
    const start = performance.now();
    size = encode(make());
    times.push(performance.now() - start);
  }
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(6)} ${rows} rows in batches of ${batch}: ${(size / 1e6).toFixed(2)} MB, median ${times[7]!.toFixed(1)} ms (min ${times[0]!.toFixed(1)}, max ${times[14]!.toFixed(1)})`);
}
