// Optional per-key rate limit: a token bucket per API key (by fingerprint) holding
// `perMinute` requests and refilled evenly over the minute, so a key may burst up to its
// limit and then sustain `perMinute` requests a minute. Past it: 429 {"detail":"RATE_LIMITED"}
// with Retry-After, the whole seconds until the next request would be allowed.
// It runs after authentication, so only configured keys have buckets: memory is bounded
// by the number of keys, and an unauthenticated caller always gets 401, never 429.

import { RATE_LIMITED } from "../failures.ts";

export interface RateLimiter {
  /** Takes one request from the key's allowance; throws 429 RATE_LIMITED when there is none. */
  take(keyFingerprint: string): void;
}

interface Bucket {
  tokens: number;
  at: number;
}

export function createRateLimiter(perMinute: number, now: () => number = () => performance.now()): RateLimiter {
  const perMs = perMinute / 60_000;
  const buckets = new Map<string, Bucket>();
  return {
    take(key) {
      const t = now();
      const bucket = buckets.get(key) ?? { tokens: perMinute, at: t };
      bucket.tokens = Math.min(perMinute, bucket.tokens + (t - bucket.at) * perMs);
      bucket.at = t;
      buckets.set(key, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return;
      }
      throw RATE_LIMITED(Math.max(1, Math.ceil((1 - bucket.tokens) / perMs / 1000)));
    },
  };
}
