// A key's terms in the key file (issue 55, part 5): `expires=` (a date or a time with its
// offset) and `rate=` (its own requests a minute) after the key, before its `# label`; what
// list-keys and /metrics make of them; the rate limiter's per-key allowance.
import { describe, expect, test } from "bun:test";
import { buildKeyRing, expiryInstant, hasExpired, keyState, parseKeyFile, presentedKey, refuseExpired, sha256Hex } from "../../src/key/api-keys.ts";
import { createRateLimiter } from "../../src/key/rate-limit.ts";
import { classify } from "../../src/failures.ts";
import { ConfigError } from "../../src/settings/config.ts";

const DAY = 86_400_000;

describe("a key's terms in the key file", () => {
  test("expires= and rate= after the key, in any order, before the label; a digest takes them too", () => {
    const digest = `sha256:${sha256Hex("digest-key-0123456789")}`;
    const entries = parseKeyFile(
      [
        "plain-key-0123456789  expires=2027-06-30  # BI team",
        `${digest}\trate=120 expires=2027-06-30T18:30:00+02:00`,
        "unlimited-key-0123456789 rate=0 # ETL",
        "bare-key-0123456789",
      ].join("\n"),
      "f",
    );
    expect(entries).toEqual([
      { value: "plain-key-0123456789", source: "f line 1", label: "BI team", expiresAt: Date.UTC(2027, 5, 30) },
      { value: digest, source: "f line 2", ratePerMinute: 120, expiresAt: Date.UTC(2027, 5, 30, 16, 30) },
      { value: "unlimited-key-0123456789", source: "f line 3", label: "ETL", ratePerMinute: 0 },
      { value: "bare-key-0123456789", source: "f line 4" },
    ]);
    const ring = buildKeyRing(entries);
    expect(ring.match("plain-key-0123456789")).toMatchObject({ label: "BI team", expiresAt: Date.UTC(2027, 5, 30) });
    expect(ring.match("digest-key-0123456789")).toMatchObject({ ratePerMinute: 120 });
    expect(ring.match("bare-key-0123456789")).toEqual({ fingerprint: expect.stringMatching(/^[0-9a-f]{8}$/) });
  });

  test("the listing names each key by label, fingerprint, digest prefix and line, never by the key", () => {
    const ring = buildKeyRing(parseKeyFile("plain-key-0123456789 expires=2027-06-30 rate=5 # BI team\n", "f"));
    expect(ring.listing).toEqual([
      {
        fingerprint: ring.match("plain-key-0123456789")!.fingerprint,
        digestPrefix: sha256Hex("plain-key-0123456789").slice(0, 12),
        label: "BI team",
        source: "f line 1",
        expiresAt: Date.UTC(2027, 5, 30),
        ratePerMinute: 5,
      },
    ]);
    expect(JSON.stringify(ring.listing)).not.toContain("plain-key");
  });

  test.each([
    ["key-0123456789abcdef expires=2027-02-30", 'f line 1: expires=2027-02-30 is not a date (2027-06-30: refused from that day\'s start, UTC) or a time with its offset (2027-06-30T18:00:00Z)'],
    ["key-0123456789abcdef expires=2027-06-30T18:00", "f line 1: expires=2027-06-30T18:00 is not a date (2027-06-30: refused from that day's start, UTC) or a time with its offset (2027-06-30T18:00:00Z)"],
    ["key-0123456789abcdef expires=30/06/2027", "f line 1: expires=30/06/2027 is not a date (2027-06-30: refused from that day's start, UTC) or a time with its offset (2027-06-30T18:00:00Z)"],
    ["key-0123456789abcdef expires=", "f line 1: expires= is not a date (2027-06-30: refused from that day's start, UTC) or a time with its offset (2027-06-30T18:00:00Z)"],
    ["key-0123456789abcdef expires=2027-06-30 expires=2028-01-01", "f line 1: expires= is given twice"],
    ["key-0123456789abcdef rate=-1", "f line 1: rate=-1 is not a whole number of requests a minute from 0 (no limit) to 1000000"],
    ["key-0123456789abcdef rate=1000001", "f line 1: rate=1000001 is not a whole number of requests a minute from 0 (no limit) to 1000000"],
    ["key-0123456789abcdef rate=1.5", "f line 1: rate=1.5 is not a whole number of requests a minute from 0 (no limit) to 1000000"],
    ["key-0123456789abcdef rate=1 rate=2", "f line 1: rate= is given twice"],
    ["key-0123456789abcdef expire=2027-06-30", 'f line 1: unexpected text after the key: "expire=2027-06-30" (a key has no spaces; after it may come expires=<date>, rate=<per minute> and # <label>)'],
    ["key-0123456789abcdef expires", 'f line 1: unexpected text after the key: "expires" (a key has no spaces; after it may come expires=<date>, rate=<per minute> and # <label>)'],
  ])("a term that is not understood is refused with its line, never dropped: %s", (line, problem) => {
    expect(() => parseKeyFile(line + "\n", "f")).toThrow(new ConfigError(problem));
  });

  test("an expiry instant: a date is its day's first instant in UTC; a time keeps its offset; leap days exist only in leap years", () => {
    expect(expiryInstant("2028-02-29")).toBe(Date.UTC(2028, 1, 29));
    expect(expiryInstant("2027-02-29")).toBeUndefined();
    expect(expiryInstant("2027-06-30T23:59:59-05:00")).toBe(Date.UTC(2027, 6, 1, 4, 59, 59));
    expect(expiryInstant("2027-06-30t10:00z")).toBe(Date.UTC(2027, 5, 30, 10));
    expect(expiryInstant("2027-13-01")).toBeUndefined();
    expect(expiryInstant("2027-06-30T25:00:00Z")).toBeUndefined();
  });
});

describe("an expired key", () => {
  const ring = buildKeyRing(parseKeyFile("old-key-0123456789 expires=2027-06-30 # old laptop\n", "f"));
  const at = Date.UTC(2027, 5, 30);

  test("is refused from its expiry's instant on, with an unknown key's 401 for the client and a warn line for the operator", () => {
    const key = presentedKey(ring, "Bearer old-key-0123456789");
    expect(() => refuseExpired(key, at - 1)).not.toThrow();
    let refused: unknown;
    try {
      refuseExpired(key, at);
    } catch (err) {
      refused = err;
    }
    expect(classify(refused)).toMatchObject({ status: 401, detail: "INVALID_API_KEY", headers: {}, level: "warn" });
    let unknown: unknown;
    try {
      presentedKey(ring, "Bearer not-a-key-0123456789");
    } catch (err) {
      unknown = err;
    }
    expect(classify(unknown)).toMatchObject({ status: 401, detail: "INVALID_API_KEY", headers: {}, level: "info" });
  });

  test("its state: active, expiring within 14 days, expired", () => {
    const [key] = ring.listing;
    expect([keyState(key!, at - 15 * DAY), keyState(key!, at - 13 * DAY), keyState(key!, at), keyState({}, at)]).toEqual(["active", "expiring", "expired", "active"]);
    expect([hasExpired(key!, at - 1), hasExpired(key!, at)]).toEqual([false, true]);
  });
});

describe("a key's own rate", () => {
  test("a key's rate= is its allowance, whatever the default; 0 is none; the default applies to the others", () => {
    let now = 0;
    const limiter = createRateLimiter(0, () => now);
    expect(limiter.take("unlimited")).toBeUndefined();
    expect(limiter.take("own", 2)).toEqual({ "ratelimit-policy": '"per-key";q=2;w=60', ratelimit: '"per-key";r=1;t=30' });
    expect(limiter.take("own", 2)).toEqual({ "ratelimit-policy": '"per-key";q=2;w=60', ratelimit: '"per-key";r=0;t=60' });
    expect(() => limiter.take("own", 2)).toThrow(expect.objectContaining({ status: 429, headers: { "retry-after": "30", "ratelimit-policy": '"per-key";q=2;w=60', ratelimit: '"per-key";r=0;t=60' } }));
    const limited = createRateLimiter(1, () => now);
    expect(limited.take("default")).toMatchObject({ "ratelimit-policy": '"per-key";q=1;w=60' });
    expect(() => limited.take("default")).toThrow(expect.objectContaining({ status: 429 }));
    for (let i = 0; i < 5; i++) expect(limited.take("exempt", 0)).toBeUndefined();
  });

  test("a reload that lowers a key's rate leaves it no more than the new allowance", () => {
    let now = 0;
    const limiter = createRateLimiter(0, () => now);
    limiter.take("k", 100);
    expect(limiter.take("k", 3)).toEqual({ "ratelimit-policy": '"per-key";q=3;w=60', ratelimit: '"per-key";r=2;t=20' });
  });
});
