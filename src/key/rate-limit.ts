// Optional per-key rate limit: a token bucket per API key (by fingerprint) holding
// `perMinute` requests (RATE_LIMIT_PER_MINUTE, or the key's own `rate=` in the key file) and
// refilled evenly over the minute, so a key may burst up to its limit and then sustain
// `perMinute` requests a minute. Past it: 429 {"detail":"RATE_LIMITED"}
// with Retry-After, the whole seconds until the next request would be allowed.
// It runs after authentication, so only configured keys have buckets: memory is bounded
// by the number of keys (a key that leaves the file keeps its bucket until a restart: a few
// bytes each), and an unauthenticated caller always gets 401, never 429.
//
// Every answer to a limited key says its allowance in the IETF's RateLimit header fields
// (draft-ietf-httpapi-ratelimit-headers, structured fields): RateLimit-Policy
// `"per-key";q=<requests>;w=60`, and RateLimit `"per-key";r=<requests left now>;t=<seconds
// until the allowance is whole again>`; a 429 says r=0, and when the next request is allowed
// in Retry-After.

import { RATE_LIMITED } from "../failures.ts";

export interface RateLimiter {
  /**
   * Takes one request from the key's allowance of `perMinute` (the key's own `rate=`, else the
   * limiter's default; 0: none): the RateLimit headers of its answer, none without a limit;
   * throws 429 RATE_LIMITED (with them) when there is none left.
   */
  take(keyFingerprint: string, perMinute?: number): Record<string, string> | undefined;
}

interface Bucket {
  tokens: number;
  at: number;
}

export function createRateLimiter(defaultPerMinute: number, now: () => number = () => performance.now()): RateLimiter {
  const buckets = new Map<string, Bucket>();
  return {
    take(key, perMinute = defaultPerMinute) {
      if (perMinute <= 0) return void buckets.delete(key);
      const perMs = perMinute / 60_000;
      const headers = (tokens: number) => ({
        "ratelimit-policy": `"per-key";q=${perMinute};w=60`,
        ratelimit: `"per-key";r=${Math.floor(tokens)};t=${Math.ceil((perMinute - tokens) / perMs / 1000)}`,
      });
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: perMinute, at: t };
      // A reload may have lowered the key's rate: its bucket never holds more than the new one.
      bucket.tokens = Math.min(perMinute, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return headers(bucket.tokens);
      }
      throw RATE_LIMITED(Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)), headers(bucket.tokens));
    },
  };
}
