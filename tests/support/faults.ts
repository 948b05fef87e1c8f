// Helpers of the fault-injection tests: a real lock that makes the service's read wait, a
// look at pg_stat_activity, the in-process handler behind a real socket, raw HTTP exchanges.

import { readFileSync } from "node:fs";
import net from "node:net";
import { createPool, type Sql } from "../../src/database/client.ts";
import type { FetchHandler } from "../../src/edge/server.ts";

/** A statement PostgreSQL cancels as it runs: what a cancel sent for an earlier statement does to the next one. */
const CANCELLED_STATEMENT = "select pg_cancel_backend(pg_backend_pid()), pg_sleep(5)";

/**
 * `sql` on which the statements `victim` picks (run by unsafe(), on the pool or a session it
 * reserves) are replaced by one PostgreSQL cancels, `times` in all: a stray cancel, for real.
 */
export function strayCancels(sql: Sql, victim: (text: string) => boolean, times = 1): Sql {
  let left = times;
  const spoiled = <T extends object>(target: T): T =>
    new Proxy(target, {
      get(t, property, receiver) {
        const run = t as unknown as Pick<Sql, "unsafe" | "reserve">;
        if (property === "unsafe") return (text: string, params?: never[]) => (left > 0 && victim(text) ? (left--, run.unsafe(CANCELLED_STATEMENT)) : run.unsafe(text, params));
        if (property === "reserve") return async () => spoiled(await run.reserve());
        return Reflect.get(t, property, receiver);
      },
    });
  return spoiled(sql);
}

/** A service-like read-only pool with its own application_name, so pg_stat_activity shows only its sessions. */
export function namedPool(url: string, name: string, options: { statementTimeoutMs?: number; max?: number } = {}): Sql {
  return createPool({
    url,
    max: options.max ?? 2,
    connectTimeoutMs: 5000,
    statementTimeoutMs: options.statementTimeoutMs ?? 60000,
    readOnly: true,
    applicationName: name,
  });
}

/**
 * Takes an ACCESS EXCLUSIVE lock on `table` in a transaction of `admin` and holds it until
 * the returned function is called: every read of the table waits, a deterministic "slow query".
 * The default is the one table every read of the service opens: the change log, which both
 * the rows' query and the rendered answers' check read.
 */
export async function holdLock(admin: Sql, table = "product_cost_deltas"): Promise<() => Promise<void>> {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => (locked = r));
  const tx = admin.begin(async (t) => {
    await t.unsafe(`lock table ${table} in access exclusive mode`);
    locked();
    await released;
  });
  await Promise.race([isLocked, tx]);
  return async () => {
    release();
    await tx;
  };
}

export interface Session {
  pid: number;
  state: string | null;
  in_transaction: boolean;
  wait_event_type: string | null;
  query: string;
}

/** The sessions of one application_name, as PostgreSQL sees them. */
export async function sessionsOf(admin: Sql, applicationName: string): Promise<Session[]> {
  return await admin<Session[]>`
    select pid, state, xact_start is not null as in_transaction, wait_event_type, query
    from pg_stat_activity where split_part(application_name, ' ', 1) = ${applicationName} order by pid`;
}

/** Polls `check` until it returns true; fails with `what` after `timeoutMs` (generous by default). */
export async function waitUntil(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 15000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await Bun.sleep(50);
  }
}

/**
 * A start line for writers that must overlap: a session of its own holds advisory lock `id`;
 * each writer first takes it shared (pg_advisory_lock_shared, or the _xact_ form inside a
 * transaction), so it waits; `waiting(n)` resolves once PostgreSQL shows n of them waiting,
 * `release()` lets them all go at once.
 */
export async function advisoryBarrier(url: string, id: number): Promise<{ id: number; waiting(count: number): Promise<void>; release(): Promise<void> }> {
  // Two sessions: one holds the lock, the other watches pg_locks.
  const holder = createPool({ url, max: 2, connectTimeoutMs: 5000, statementTimeoutMs: 0, readOnly: false, applicationName: `pce-barrier-${process.pid}` });
  const session = await holder.reserve();
  await session`select pg_advisory_lock(${id})`;
  return {
    id,
    async waiting(count) {
      await waitUntil(`${count} writers at the barrier`, async () => {
        const [row] = await holder<{ n: number }[]>`
          select count(*)::int as n from pg_locks where locktype = 'advisory' and objid = ${id} and not granted`;
        return row!.n >= count;
      });
    },
    async release() {
      await session`select pg_advisory_unlock(${id})`;
      session.release();
      await holder.end({ timeout: 5 });
    },
  };
}

/** A read of the service is running on the server: in a transaction, or waiting on a lock. */
export const busy = (s: Session) => s.state === "active" || s.in_transaction;

/** The handler behind a real listening socket on 127.0.0.1 (Bun's default header limit). */
export function serveOnSocket(handle: FetchHandler): { url: string; port: number; stop(): void } {
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, reusePort: false, idleTimeout: 30, fetch: handle });
  return { url: `http://127.0.0.1:${server.port}`, port: server.port!, stop: () => void server.stop(true) };
}

export interface RawExchange {
  /** Everything received so far (latin1, byte for byte). */
  received(): string;
  /** Stops reading from the socket (the server's writes back up). */
  pause(): void;
  resume(): void;
  /** Closes the socket at once (a client that goes away). */
  destroy(): void;
  /** Resets the connection (TCP RST), as a client that crashes or a proxy that gives up. */
  reset(): void;
  /** Resolves when the server closed the connection (or after `timeoutMs`, with false). */
  closed(timeoutMs?: number): Promise<boolean>;
  /** Resolves once at least `bytes` have arrived. */
  waitFor(bytes: number, timeoutMs?: number): Promise<void>;
}

/** Sends `text` as is over a new TCP connection: for requests fetch() would refuse or rewrite. */
export function rawExchange(port: number, text: string | Buffer): RawExchange {
  const socket = net.connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  let size = 0;
  let isClosed = false;
  const waiters: (() => void)[] = [];
  const wake = () => waiters.splice(0).forEach((w) => w());
  socket.on("data", (d: Buffer) => {
    chunks.push(d);
    size += d.length;
    wake();
  });
  socket.on("error", () => {});
  socket.on("close", () => {
    isClosed = true;
    wake();
  });
  socket.write(text);
  const until = async (ok: () => boolean, timeoutMs: number) => {
    const deadline = Date.now() + timeoutMs;
    while (!ok() && Date.now() < deadline) {
      await Promise.race([new Promise<void>((r) => waiters.push(r)), Bun.sleep(50)]);
    }
    return ok();
  };
  return {
    received: () => Buffer.concat(chunks).toString("latin1"),
    pause: () => void socket.pause(),
    resume: () => void socket.resume(),
    destroy: () => void socket.destroy(),
    reset: () => void socket.resetAndDestroy(),
    closed: (timeoutMs = 15000) => until(() => isClosed, timeoutMs),
    async waitFor(bytes, timeoutMs = 15000) {
      if (!(await until(() => size >= bytes || isClosed, timeoutMs)) || size < bytes) {
        throw new Error(`only ${size} bytes arrived (wanted ${bytes})`);
      }
    },
  };
}

/** A chunked HTTP/1.1 body is complete only with its last-chunk marker. */
export function endsChunkedBody(raw: string): boolean {
  return raw.endsWith("\r\n0\r\n\r\n");
}

export const MANY_FROM = "2030-01-01";
export const MANY_TO = "2030-01-31";

/**
 * Adds `count` products with one daily row each in January 2030 (besides whatever the
 * fixture holds): an answer of `count` rows, about 170 bytes each, too big for socket buffers.
 */
export async function addManyRows(admin: Sql, count: number): Promise<void> {
  await admin`insert into products (product_id, erp_product_id, erp_sku, product_name, is_sample)
              select g, g, 'MANY-' || lpad(g::text, 7, '0'), 'many rows', false
              from generate_series(1000000, ${1000000 + count - 1}::bigint) g`;
  await admin`insert into product_daily_costs (product_id, cost_date, purchase_cost_usd, inbound_freight_usd,
                shipping_to_customer_usd, warehouse_fees_usd)
              select g, date '2030-01-15', 1.5, 2, null, 0
              from generate_series(1000000, ${1000000 + count - 1}::bigint) g`;
}

/** A GET of the product-costs endpoint as raw HTTP/1.1 text. */
export function rawGet(query: string, key: string, extraHeaders = ""): string {
  return `GET /external/v1/product-costs?${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n${extraHeaders}\r\n`;
}

/** Sends raw bytes on a new connection and returns everything received until the server closes. */
export async function rawRoundTrip(port: number, bytes: Buffer, timeoutMs = 15000): Promise<Buffer> {
  const socket = net.connect(port, "127.0.0.1");
  const chunks: Buffer[] = [];
  socket.on("data", (d: Buffer) => chunks.push(d));
  const closed = new Promise<void>((resolve) => {
    socket.on("close", () => resolve());
    socket.on("error", () => resolve());
  });
  socket.write(bytes);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = await Promise.race([closed.then(() => false), new Promise<boolean>((r) => (timer = setTimeout(() => r(true), timeoutMs)))]);
  clearTimeout(timer);
  socket.destroy();
  if (timedOut) throw new Error(`no close within ${timeoutMs} ms`);
  return Buffer.concat(chunks);
}

/** Resident memory of a process in MiB, from /proc/<pid>/status. */
export function rssMb(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  if (!m) throw new Error(`no VmRSS for ${pid}`);
  return Number(m[1]) / 1024;
}

export interface PausableProxy {
  port: number;
  /**
   * Stops forwarding in both directions without closing anything, as a network partition or
   * a frozen proxy does: bytes and closes from either side are held, new connections are
   * accepted and held too.
   */
  pause(): void;
  /** Forwards what was held, in order, and carries on. */
  resume(): void;
  paused(): boolean;
  /** Connections accepted so far. */
  accepted(): number;
  stop(): void;
}

/** A TCP forwarder to 127.0.0.1:`targetPort` that the test can make go silent. */
export async function pausableProxy(targetPort: number): Promise<PausableProxy> {
  let paused = false;
  let accepted = 0;
  const held: (() => void)[] = [];
  const whenForwarding = (action: () => void) => (paused ? held.push(action) : action());
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    accepted++;
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const [from, to] of [
      [client, upstream],
      [upstream, client],
    ] as const) {
      sockets.add(from);
      from.on("data", (data: Buffer) => whenForwarding(() => void to.write(data)));
      from.on("end", () => whenForwarding(() => void to.end()));
      from.on("error", () => whenForwarding(() => void to.destroy()));
      from.on("close", () => (sockets.delete(from), whenForwarding(() => void to.destroy())));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    pause: () => void (paused = true),
    resume() {
      paused = false;
      held.splice(0).forEach((action) => action());
    },
    paused: () => paused,
    accepted: () => accepted,
    stop() {
      server.close();
      sockets.forEach((s) => s.destroy());
    },
  };
}
