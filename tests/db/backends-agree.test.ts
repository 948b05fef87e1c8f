// The embedded database keeps the contract: for the same data it answers exactly what a
// real PostgreSQL answers. Reported as skipped where there is no PostgreSQL.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { backends, type BackendHandle } from "../support/backends.ts";
import { describeWithPostgres } from "../support/postgres.ts";
import { testApp, type TestApp } from "../support/app.ts";
import { loadFixture } from "../support/fixtures.ts";
import { randomFixture, randomRanges } from "../support/random-fixture.ts";

const SEED = 20261121;

describeWithPostgres("embedded and PostgreSQL give byte-identical responses for the same data", () => {
  const handles: BackendHandle[] = [];
  const apps: TestApp[] = [];
  beforeAll(async () => {
    const { products, daily } = randomFixture(SEED);
    for (const backend of backends()) {
      const h = await backend.open();
      await loadFixture(h.admin, products, daily);
      handles.push(h);
      apps.push(testApp(h.service, { batchSize: 37 }));
    }
    expect(backends().map((b) => b.name)).toEqual(["embedded", "postgresql"]);
  });
  afterAll(async () => {
    for (const h of handles) await h.close();
  });

  test.each(randomRanges(SEED, 24).flatMap(([from, to]) => ["normal", "sample", "all"].map((s) => [from, to, s] as const)))(
    "%s .. %s segment=%s",
    async (from, to, segment) => {
      const path = `/external/v1/product-costs?month_from=${from}&month_to=${to}&segment=${segment}`;
      const [embedded, postgresql] = await Promise.all(apps.map(async (a) => {
        const r = await a.get(path);
        return { status: r.status, body: await r.text() };
      }));
      expect(embedded).toEqual(postgresql!);
      expect(embedded!.status).toBe(from <= to ? 200 : 400);
    },
  );
});
