// What the service relies on in postgres.js 3.4.9 beyond its documented surface, and the
// documented behaviour of cursors that src/reads/product-costs.ts builds on, each pinned here so
// that an upgrade changing it fails a test instead of the service.
import { afterAll, expect, test } from "bun:test";
import postgres from "postgres";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("postgres.js: what the service relies on", () => {
  const sql = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  const admin = postgres(SERVER_URL, { max: 1, onnotice: () => {} });
  afterAll(() => Promise.all([sql.end({ timeout: 2 }), admin.end({ timeout: 2 })]));

  test("private: a query's `state` is set once it is handed to an open connection, not while it waits for one", async () => {
    // product-costs.ts: the connection deadline (DB_CONNECT_TIMEOUT_MS) of a read.
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const nowhere = postgres({ host: "127.0.0.1", port: silent.port, max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      const waiting = nowhere`select 1`;
      waiting.catch(() => {});
      await Bun.sleep(200);
      expect((waiting as unknown as { state?: unknown }).state).toBeFalsy();
      const running = sql`select pg_sleep(0.2)`.execute();
      await Bun.sleep(100);
      expect((running as unknown as { state?: unknown }).state).toBeTruthy();
      await running;
    } finally {
      await nowhere.end({ timeout: 0 });
      silent.stop(true);
    }
  });

  test("private: a connection that fails while starting names its peer in `address` and `port`", async () => {
    // not-postgresql.ts asks that peer what it is.
    const dropper = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { open: (s) => void s.end(), data() {} } });
    const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
    const failure = async (port: number) => {
      const pool = postgres({ host: "127.0.0.1", port, max: 1, connect_timeout: 1, onnotice: () => {} });
      try {
        const err = (await pool`select 1`.catch((e) => e)) as { code: string; address: unknown; port: unknown };
        return { code: err.code, address: err.address, port: err.port };
      } finally {
        await pool.end({ timeout: 0 });
      }
    };
    try {
      expect(await failure(dropper.port)).toEqual({ code: "CONNECTION_CLOSED", address: "127.0.0.1", port: dropper.port });
      expect(await failure(silent.port)).toEqual({ code: "CONNECT_TIMEOUT", address: "127.0.0.1", port: silent.port });
    } finally {
      dropper.stop(true);
      silent.stop(true);
    }
  });

  test("cursor callback: batches of exactly the size asked but the last, each asked for once the callback's promise resolves", async () => {
    const seen: number[][] = [];
    let release = () => {};
    const done = Promise.resolve(
      sql`select x from generate_series(1, 5) x`.values().cursor(2, (rows) => {
        seen.push(rows.map(([x]) => Number(x)));
        return new Promise<void>((resolve) => (release = resolve)) as unknown as void;
      }),
    );
    await Bun.sleep(100);
    expect(seen).toEqual([[1, 2]]); // no second batch while the first is held
    release();
    await Bun.sleep(100);
    expect(seen).toEqual([[1, 2], [3, 4]]);
    release();
    await done;
    expect(seen).toEqual([[1, 2], [3, 4], [5]]);
  });

  test("cursor callback: sql.CLOSE ends the query and frees the connection; a connection lost meanwhile rejects the query", async () => {
    const closed = sql`select x from generate_series(1, 100) x`.cursor(10, () => sql.CLOSE as unknown as void);
    expect(await closed.then(() => "resolved")).toBe("resolved");
    expect([...(await sql`select 1 as one`)]).toEqual([{ one: 1 }]);

    const lost = sql`select x, pg_backend_pid() as pid from generate_series(1, 100) x`.cursor(10, async (rows) => {
      await admin`select pg_terminate_backend(${rows[0]!.pid})`;
      await new Promise(() => {}); // held: the portal waits for us
    });
    const failure = (await lost.catch((err) => err)) as { code?: string };
    expect(["CONNECTION_CLOSED", "ECONNRESET", "57P01"]).toContain(failure.code!);
  });
});
