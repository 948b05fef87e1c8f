// Several instances behind a load balancer, in practice: two executables on one PostgreSQL
// behind a small HTTP balancer written here (round robin over the instances whose /readyz
// answers 200, X-Forwarded-For added, as nginx or HAProxy would). Every answer is the same
// exact bytes whichever instance gives it; the instances log the client the balancer names
// (TRUSTED_PROXIES); when one instance stops, the balancer's health check takes it out and
// no request fails.

import { afterAll, beforeAll, expect, test } from "bun:test";
import { JANUARY_NORMAL } from "../http/fixture.ts";
import { isolatedBinary, postgresFixtureEnv, startBinary, type RunningBinary } from "../support/binary.ts";
import { describeWithPostgres } from "../support/postgres.ts";

const KEY = "scale-out-key-4e1b";
const JAN = "/external/v1/product-costs?month_from=2024-01-01&month_to=2024-01-31";

describeWithPostgres("two instances behind a load balancer", () => {
  const instances: RunningBinary[] = [];
  let balancer: ReturnType<typeof Bun.serve>;
  const healthy = new Set<string>();
  let next = 0;

  async function check(): Promise<void> {
    for (const s of instances) {
      const ok = await fetch(`${s.url}/readyz`).then((r) => r.status === 200, () => false);
      if (ok) healthy.add(s.url);
      else healthy.delete(s.url);
    }
  }

  beforeAll(async () => {
    const bin = isolatedBinary();
    const env = { ...(await postgresFixtureEnv()), PRODUCT_COST_API_KEYS: KEY, TRUSTED_PROXIES: "127.0.0.1" };
    for (let i = 0; i < 2; i++) instances.push(await startBinary(bin.path, env, [], bin.dir));
    await check();
    balancer = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      async fetch(request) {
        const targets = [...healthy];
        if (targets.length === 0) return new Response("no healthy instance", { status: 502 });
        const target = targets[next++ % targets.length]!;
        const url = new URL(request.url);
        const headers = new Headers(request.headers);
        headers.set("x-forwarded-for", "198.51.100.23");
        headers.set("accept-encoding", "identity"); // fetch() would decode a compressed body and keep its header
        return fetch(target + url.pathname + url.search, { headers });
      },
    });
  }, 60_000);
  afterAll(async () => {
    balancer?.stop(true);
    for (const s of instances) await s.stop();
  });

  const viaBalancer = async (id: string) => {
    const res = await fetch(`${balancer.url}${JAN.slice(1)}`, { headers: { authorization: `Bearer ${KEY}`, "x-request-id": id } });
    return { status: res.status, body: await res.text() };
  };

  test("answers are the same exact bytes from either instance, and both serve", async () => {
    for (let i = 0; i < 20; i++) expect(await viaBalancer(`lb-${i}`)).toEqual({ status: 200, body: JANUARY_NORMAL });
    for (const s of instances) {
      await s.waitForLine((l) => l.request_id === "lb-19" || l.request_id === "lb-18");
      const served = s.lines.filter((l) => String(l.request_id).startsWith("lb-"));
      expect(served.length).toBe(10);
      // The client the balancer named, not the balancer.
      expect(served.every((l) => l.client === "198.51.100.23")).toBe(true);
    }
  });

  test("an instance that stops is taken out by the health check, and no request fails", async () => {
    expect(await instances[0]!.stop()).toBe(0);
    await check();
    expect(healthy.size).toBe(1);
    for (let i = 0; i < 10; i++) expect(await viaBalancer(`after-${i}`)).toEqual({ status: 200, body: JANUARY_NORMAL });
  });
});
