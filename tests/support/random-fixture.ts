// A seeded random fixture: the same seed gives the same products and daily rows.

import type { DailyCostFixture, ProductFixture } from "./fixtures.ts";

/** mulberry32: small, fast, good enough to vary test data reproducibly. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SKU_PARTS = ["sku", "SKU", "Sku", "a", "B", "z", "Z", "é", "_", "-", "0", "9", " "];

export function randomFixture(seed: number, products = 120, days = 90, start = "2024-01-01"): { products: ProductFixture[]; daily: DailyCostFixture[] } {
  const rnd = prng(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rnd() * xs.length)]!;
  const amount = () => {
    const r = rnd();
    if (r < 0.08) return null;
    if (r < 0.12) return "0";
    const sign = rnd() < 0.05 ? "-" : "";
    return `${sign}${Math.floor(rnd() * 10 ** (1 + Math.floor(rnd() * 8)))}.${String(Math.floor(rnd() * 1e6)).padStart(6, "0")}`;
  };
  const out: ProductFixture[] = [];
  for (let id = 1; id <= products; id++) {
    const unmapped = rnd() < 0.1;
    out.push({
      product_id: id,
      erp_product_id: unmapped ? null : rnd() < 0.05 ? "9223372036854775807" : Math.floor(rnd() * 1000),
      erp_sku: unmapped ? null : Array.from({ length: 1 + Math.floor(rnd() * 4) }, () => pick(SKU_PARTS)).join(""),
      product_name: rnd() < 0.1 ? null : `Product ${id} ${pick(["日本", "Ünï", "\"q\"", "a,b", ""])}`,
      is_sample: rnd() < 0.2,
    });
  }
  const daily: DailyCostFixture[] = [];
  const t0 = Date.parse(`${start}T00:00:00Z`);
  for (const p of out) {
    for (let d = 0; d < days; d++) {
      if (rnd() > 0.3) continue;
      daily.push({
        product_id: p.product_id,
        cost_date: new Date(t0 + d * 86400_000).toISOString().slice(0, 10),
        purchase_cost_usd: amount(),
        inbound_freight_usd: amount(),
        shipping_to_customer_usd: amount(),
        warehouse_fees_usd: amount(),
      });
    }
  }
  return { products: out, daily };
}

/** Random inclusive ranges within [start, start + days), some one day long, some whole months. */
export function randomRanges(seed: number, count: number, days = 90, start = "2024-01-01"): [string, string][] {
  const rnd = prng(seed);
  const t0 = Date.parse(`${start}T00:00:00Z`);
  const date = (d: number) => new Date(t0 + d * 86400_000).toISOString().slice(0, 10);
  const ranges: [string, string][] = [["2024-01-01", "2024-01-31"], ["2024-02-01", "2024-02-29"], [date(0), date(days - 1)]];
  while (ranges.length < count) {
    const a = Math.floor(rnd() * (days + 10)) - 5;
    const b = rnd() < 0.2 ? a : a + Math.floor(rnd() * 60);
    ranges.push([date(a), date(b)]);
  }
  return ranges;
}
