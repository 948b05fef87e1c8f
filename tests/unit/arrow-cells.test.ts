// The Arrow stream's cells (src/body/arrow.ts): an amount's text becomes its unscaled integer
// at scale 6 without a float; what decimal128(38, 6) cannot hold exactly is refused, never rounded.
import { expect, test } from "bun:test";
import { tableFromIPC } from "apache-arrow";
import { arrowStream, unscaledDigits } from "../../src/body/arrow.ts";

const bytes = (text: string) => new TextEncoder().encode(text);

test.each([
  ["0", "0"],
  ["12.5", "12500000"],
  ["-12.5", "-12500000"],
  ["0.000001", "1"],
  ["-0.000001", "-1"],
  ["99999999999999.999999", "99999999999999999999"],
  ["00012", "12000000"],
  ["99999999999999999999999999999999.999999", "99999999999999999999999999999999999999"],
])("%s is %s millionths", (text, digits) => {
  expect(unscaledDigits(bytes(text), "purchase_cost_usd")).toBe(digits);
});

test("more than 6 decimals or more than 38 digits is refused with the field, never rounded", () => {
  expect(() => unscaledDigits(bytes("1.0000001"), "purchase_cost_usd")).toThrow("purchase_cost_usd has more than 6 decimals: 1.0000001");
  expect(() => unscaledDigits(bytes("100000000000000000000000000000000"), "warehouse_fees_usd")).toThrow("warehouse_fees_usd has more than 38 digits");
});

test("NaN and Infinity have no decimal128 form: the batch is refused (the body then breaks off, as the JSON's)", () => {
  const row = (amount: string) => [bytes("1"), bytes("S"), bytes("N"), bytes(amount), null, null, null];
  for (const amount of ["NaN", "Infinity", "-Infinity"]) expect(() => arrowStream().begin([row(amount)])).toThrow(`purchase_cost_usd is not a finite decimal: ${amount}`);
});

test("every sign and size of amount round-trips through the words: the small ones without a BigInt, the large ones with", () => {
  const amounts = ["0", "1", "-1", "4294.967295", "-4294.967296", "4294.967296", "999999999.999999", "-999999999.999999", "9007199254.740993", "-9007199254.740993", "-99999999999999999999999999999999.999999"];
  const enc = arrowStream();
  const body = Buffer.concat([enc.begin(amounts.map((a) => [bytes("1"), null, null, bytes(a), null, null, null])), enc.end]);
  const column = tableFromIPC(body).getChild("purchase_cost_usd")!;
  const read = amounts.map((_, r) => {
    const words = column.data[0]!.values as Uint32Array;
    let value = 0n;
    for (let w = 3; w >= 0; w--) value = (value << 32n) | BigInt(words[r * 4 + w]!);
    return BigInt.asIntN(128, value).toString();
  });
  expect(read).toEqual(amounts.map((a) => BigInt(unscaledDigits(bytes(a), "x")).toString()));
});
