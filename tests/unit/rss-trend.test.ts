// The RSS trend of the memory tests (tests/support/rss-trend.ts) tells a leak from the
// collector's timing: samples drawn like the ones measured (a floor that settles, then swings
// of up to 20 MB above it as the collector runs late or early), with and without a leak.
import { expect, test } from "bun:test";
import { LEAK_KB_PER_REQUEST, rssTrend, type RssSample } from "../support/rss-trend.ts";
import { prng } from "../support/random-writes.ts";

/** `requests` requests, one sample per 8; the floor settles by 6 MB over the first 1,000, then stays; plus `leakKb` per request. */
function samples(seed: number, requests: number, leakKb: number): RssSample[] {
  const r = prng(seed);
  const out: RssSample[] = [];
  for (let after = 0; after < requests; after += 8) {
    const settling = 6 * Math.min(after, 1000) / 1000;
    const collectorSwing = r.chance(0.3) ? r.next() * 20 : r.next() * 3;
    out.push({ after, mb: 70 + settling + (after * leakKb) / 1024 + collectorSwing });
  }
  return out;
}

test("no leak: under the bound, whatever the collector's timing (50 seeds)", () => {
  for (let seed = 1; seed <= 50; seed++) expect({ seed, under: rssTrend(samples(seed, 6000, 0), 500).kb_per_request < LEAK_KB_PER_REQUEST }).toEqual({ seed, under: true });
});

test("a leak of 3 KB a request, and one of 1.4 (the request deadline's, once): over the bound (50 seeds)", () => {
  for (const leak of [3, 1.4]) {
    for (let seed = 1; seed <= 50; seed++) expect({ leak, seed, over: rssTrend(samples(seed, 6000, leak), 500).kb_per_request > LEAK_KB_PER_REQUEST }).toEqual({ leak, seed, over: true });
  }
});
