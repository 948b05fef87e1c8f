// Amounts in micro-units (src/reads/edges/micro-units.ts) against PostgreSQL's own numeric: for values
// from numeric(20,6)'s whole domain (its largest and smallest, a micro-unit, zero, 2^53 and
// 2^63 micro-units either side) and sums of many past them, the differences and totals, as
// trim_scale writes them. The answer's text from micro-units must be the text PostgreSQL
// writes today, byte for byte.

import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { decimalText, difference, microOf, total, decimalBytes, type Micro } from "../../src/reads/edges/micro-units.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { prng } from "../support/random-writes.ts";
import { testSeed } from "../support/seed.ts";

const encoder = new TextEncoder();
const micro = (text: string): Micro => microOf(encoder.encode(text));

const EDGES = [
  "0",
  "0.000001",
  "-0.000001",
  "1",
  "100.5",
  "99999999999999.999999",
  "-99999999999999.999999",
  "9007199254.740991", // 2^53 - 1 micro-units
  "9007199254.740992",
  "-9007199254.740993",
  "9223372036854.775807", // 2^63 - 1
  "9223372036854.775808",
  "12599.931181",
  "0.1",
];

/** A random numeric(20,6) as PostgreSQL would write it at scale 6 or less. */
function randomDecimal(r: ReturnType<typeof prng>): string {
  const whole = r.int(0, 14) === 0 ? "0" : String(r.int(1, 9)) + Array.from({ length: r.int(0, 13) }, () => r.int(0, 9)).join("");
  const scale = r.int(0, 6);
  const fraction = Array.from({ length: scale }, () => r.int(0, 9)).join("");
  return (r.chance(0.3) ? "-" : "") + whole + (scale ? "." + fraction : "");
}

describeWithPostgres("micro-units against PostgreSQL's numeric", () => {
  const sql = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  afterAll(() => sql.end({ timeout: 2 }));

  test("each value, and the difference and the total of every pair, as trim_scale writes them", async () => {
    const r = prng(testSeed("micro-units"));
    const values = [...EDGES, ...Array.from({ length: 400 }, () => randomDecimal(r))];
    const pairs = Array.from({ length: 2000 }, () => [r.pick(values), r.pick(values)] as const);
    const rows = await sql<{ a: string; d: string; t: string }[]>`
      select trim_scale(a::numeric)::text as a, trim_scale(a::numeric - b::numeric)::text as d, trim_scale(a::numeric + b::numeric)::text as t
      from unnest(${pairs.map((p) => p[0])}::text[], ${pairs.map((p) => p[1])}::text[]) as x(a, b)`;
    const ours = pairs.map(([a, b]) => ({ a: decimalText(micro(a)), d: decimalText(difference(micro(a), micro(b))), t: decimalText(total(micro(a), micro(b))) }));
    expect(ours).toEqual(rows.map((row) => ({ a: row.a, d: row.d, t: row.t })));
  });

  test("sums of many large values, past 2^63 micro-units, and back to small by difference", async () => {
    const big = Array.from({ length: 300 }, (_, i) => (i % 3 === 2 ? "-" : "") + "99999999999999.99999" + (i % 10));
    const [row] = await sql<{ s: string }[]>`select trim_scale(sum(x::numeric))::text as s from unnest(${big}::text[]) x`;
    const s = row!.s;
    let sum: Micro = 0;
    for (const x of big) sum = total(sum, micro(x));
    expect(decimalText(sum)).toBe(s);
    expect(typeof sum).toBe("bigint");
    // The difference of two such edges can be small again: a number, exact.
    const edge = difference(total(sum, micro("0.5")), sum);
    expect([edge, decimalText(edge)]).toEqual([500_000, "0.5"]);
  });
});

test("PostgreSQL's numeric text is read, and nothing else", () => {
  expect([micro("3"), micro("-12.5"), micro("0.000001"), micro("12599.931181"), micro("100.500000")]).toEqual([3_000_000, -12_500_000, 1, 12_599_931_181, 100_500_000]);
  expect(micro("99999999999999.999999")).toBe(99_999_999_999_999_999_999n);
  for (const bad of ["", "-", ".", "1.0000001", "1e5", "NaN", "Infinity", " 1", "1,5", "1..2"]) expect(() => micro(bad)).toThrow();
});

test("the text of a safe integer near 2^53 is exact: its whole part and its six decimals, never rounded up", () => {
  const reference = (m: bigint) => {
    const f = (m < 0n ? -m : m) % 1_000_000n;
    return (m < 0n ? "-" : "") + ((m < 0n ? -m : m) / 1_000_000n).toString() + (f ? "." + f.toString().padStart(6, "0").replace(/0+$/, "") : "");
  };
  const cases: number[] = [];
  for (const whole of [9_007_199_253, 9_007_199_254, 8_999_999_999, 4_503_599_627, 1, 0]) {
    for (const f of [0, 1, 10, 500_000, 740_991, 999_990, 999_999]) {
      const m = whole * 1_000_000 + f;
      if (Number.isSafeInteger(m)) cases.push(m, -m);
    }
  }
  expect(cases.map((m) => decimalText(m))).toEqual(cases.map((m) => reference(BigInt(m))));
  expect(cases).toContain(9_007_199_254_740_991);
});

test("decimalBytes are decimalText's bytes, for every edge of the domain and random values, number or bigint", () => {
  const r = prng(testSeed("decimalBytes"));
  const values = [...EDGES.map(micro), ...Array.from({ length: 5000 }, () => micro(randomDecimal(r))), 0, -0, 10, -10, 1_000_000, 10_000_000, 9_007_199_254_740_991, -9_007_199_254_740_991];
  expect(values.map((x) => new TextDecoder().decode(decimalBytes(x)))).toEqual(values.map(decimalText));
});
