// The test backends themselves: a test reads through what production reads through. The
// service handle of each backend is read-only as the service's sessions are (on the embedded
// database, PGlite's one session is read-only by default, as when serving), and fixtures are
// written through the admin handle all the same.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { describeBackends, type BackendHandle } from "../support/backends.ts";

describeBackends("the $name test backend", (backend) => {
  let db: BackendHandle;
  beforeAll(async () => {
    db = await backend.open();
  });
  afterAll(async () => {
    await db.close();
  });

  test("its service handle refuses to write (25006), like the service's own sessions", async () => {
    const error = await db.service`insert into products (product_id) values (424242)`.catch((e) => e);
    expect([error?.code, error?.message]).toEqual(["25006", "cannot execute INSERT in a read-only transaction"]);
  });

  test("its admin handle writes fixtures, and the service handle reads them", async () => {
    await db.admin`delete from products where product_id = 434343`;
    await db.admin`insert into products (product_id, erp_sku) values (434343, 'BACKEND-TEST')`;
    expect([...(await db.service`select erp_sku from products where product_id = 434343`)]).toEqual([{ erp_sku: "BACKEND-TEST" }]);
    await db.admin`delete from products where product_id = 434343`;
  });
});
