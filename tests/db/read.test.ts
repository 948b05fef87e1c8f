// The one owner of a read (src/reads/read.ts): whatever state it is closed in (waiting for a
// slot, opening, streaming, drained), the slot is given back exactly once, the statement no
// longer runs, and every later wait throws the reason. Against real PostgreSQL, with the
// service's own admission slots.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Sql } from "../../src/database/client.ts";
import { DatabaseDeadlineError } from "../../src/database/errors.ts";
import { openRead, type Statement } from "../../src/reads/read.ts";
import { createAdmission } from "../../src/answer/answer-reads.ts";
import { testDatabase } from "../support/database.ts";
import { namedPool, sessionsOf, waitUntil } from "../support/faults.ts";
import { describeWithPostgres } from "../support/postgres.ts";

describeWithPostgres("a read and what it holds", () => {
  const NAME = `pce-read-${process.pid}`;
  let sql: Sql;
  let admin: Sql;

  beforeAll(async () => {
    const db = await testDatabase();
    admin = db.admin;
    sql = namedPool(db.url, NAME, { max: 2 });
  }, 60_000);

  afterAll(async () => {
    await sql.end({ timeout: 2 });
  }, 30_000);

  const MANY: Statement = { text: "select g::text from generate_series(1, 100000) g", params: [] };
  const ONE: Statement = { text: "select 'one'", params: [] };
  const NONE: Statement = { text: "select 'none' where false", params: [] };
  const SLOW: Statement = { text: "select pg_sleep(30)::text", params: [] };
  const slots = () => createAdmission({ maxConcurrent: 1, maxQueued: 5, queueTimeoutMs: 30_000 });
  const running = async () => (await sessionsOf(admin, NAME)).filter((s) => s.state === "active").length;
  const failureOf = (p: Promise<unknown>) => p.then(
    () => "no failure",
    (err: unknown) => err,
  );

  test("a small answer gives its slot back as soon as its first batch is in, before its rows are taken", async () => {
    const admission = slots();
    const read = await openRead<Buffer[]>(sql, [{ statement: ONE, batchSize: 10 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 10_000, slots: admission });
    expect({ first: read.first.map((r) => r[0]!.toString()), slots: { running: admission.stats().running, queued: admission.stats().queued } }).toEqual({ first: ["one"], slots: { running: 0, queued: 0 } });
    expect(await read.next()).toBeUndefined();
    await read.close();
    expect(admission.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  test("a streaming read holds its slot; closed twice, it gives it back once, and its next batch throws the reason", async () => {
    const admission = slots();
    const read = await openRead(sql, [{ statement: MANY, batchSize: 100 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 10_000, slots: admission });
    expect(read.first.length).toBe(100);
    expect((await read.next())!.length).toBe(100);
    expect(admission.stats()).toMatchObject({ running: 1, queued: 0 });
    const reason = new Error("the body is done with");
    await read.close(reason);
    await read.close(new Error("again"));
    expect(admission.stats()).toMatchObject({ running: 0, queued: 0 });
    expect(await failureOf(read.next())).toBe(reason);
    // The slot really is free, and only one: two more reads, one runs and one waits.
    const again = await openRead(sql, [{ statement: MANY, batchSize: 100 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 10_000, slots: admission });
    expect(admission.stats()).toMatchObject({ running: 1, queued: 0 });
    await again.close();
  });

  test("an open read has one way to be closed, its reader's: the request's signal reaches it through the body", async () => {
    // body.ts listens to the signal and closes its source (row-stream.ts: this read); the read
    // itself listened too, a second close path for the same event.
    const admission = slots();
    const client = new AbortController();
    const read = await openRead(sql, [{ statement: MANY, batchSize: 100 }], { signal: client.signal, firstBatchTimeoutMs: 10_000, slots: admission });
    client.abort(new Error("the client left"));
    expect({ next: (await read.next())!.length, slots: { running: admission.stats().running, queued: admission.stats().queued } }).toEqual({ next: 100, slots: { running: 1, queued: 0 } });
    const reason = new Error("the body was cut");
    await read.close(reason);
    expect({ next: await failureOf(read.next()), slots: { running: admission.stats().running, queued: admission.stats().queued } }).toEqual({ next: reason, slots: { running: 0, queued: 0 } });
  });

  test("a read whose client leaves while it waits for a slot never takes one", async () => {
    const admission = slots();
    const holder = await openRead(sql, [{ statement: MANY, batchSize: 100 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 10_000, slots: admission });
    const client = new AbortController();
    const waiting = failureOf(openRead(sql, [{ statement: MANY, batchSize: 100 }], { signal: client.signal, firstBatchTimeoutMs: 10_000, slots: admission }));
    await waitUntil("the second read waits for the slot", () => admission.stats().queued === 1);
    const gone = new Error("client gone");
    client.abort(gone);
    expect(await waiting).toBe(gone);
    expect(admission.stats()).toMatchObject({ running: 1, queued: 0 });
    await holder.close();
    expect(admission.stats()).toMatchObject({ running: 0, queued: 0 });
  });

  // The slot bounds connections in use: it is given back once the cancelled statement has
  // ended and its connection is the pool's again (a few milliseconds), while the request is
  // answered at once.
  test("the client leaving while the statement runs: answered at once, the statement cancelled, then the slot given back", async () => {
    const admission = slots();
    const client = new AbortController();
    const opening = failureOf(openRead(sql, [{ statement: SLOW, batchSize: 10 }], { signal: client.signal, firstBatchTimeoutMs: 60_000, slots: admission }));
    await waitUntil("the statement runs", async () => (await running()) === 1);
    const gone = new Error("client gone");
    const started = performance.now();
    client.abort(gone);
    expect(await opening).toBe(gone);
    expect(performance.now() - started).toBeLessThan(1000);
    await waitUntil("the statement is cancelled", async () => (await running()) === 0);
    // Within 2 s: close() waited for the cancelled statement's end for its whole 5 s bound
    // (a promise that settled only with the next batch), holding the slot all that time.
    await waitUntil("the slot is given back", () => admission.stats().running === 0, 2000);
  });

  test("past the first-answer deadline: DatabaseDeadlineError, the statement cancelled, the slot given back", async () => {
    const admission = slots();
    const err = await failureOf(openRead(sql, [{ statement: SLOW, batchSize: 10 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 300, slots: admission }));
    expect(err).toBeInstanceOf(DatabaseDeadlineError);
    await waitUntil("the statement is cancelled", async () => (await running()) === 0);
    // Within 2 s: close() waited for the cancelled statement's end for its whole 5 s bound
    // (a promise that settled only with the next batch), holding the slot all that time.
    await waitUntil("the slot is given back", () => admission.stats().running === 0, 2000);
  });

  test("a batch handed on is not held by the read: a streaming read keeps only what it has not handed on yet", async () => {
    const read = await openRead<Buffer[]>(sql, [{ statement: MANY, batchSize: 1000 }], { signal: new AbortController().signal, firstBatchTimeoutMs: 10_000 });
    // Each batch is only looked at through a WeakRef: once handed on, nothing of ours holds it.
    const handedOn: WeakRef<object>[] = [];
    const takeOne = async () => {
      const batch = await read.next();
      handedOn.push(new WeakRef(batch!));
    };
    for (let i = 0; i < 20; i++) await takeOne();
    for (let i = 0; i < 3; i++) {
      Bun.gc(true);
      await Bun.sleep(10);
    }
    // Each wait of the read once raced one promise of the whole read, which kept every race,
    // and so every batch read, until the read itself was let go (20 of 20 alive here).
    const alive = handedOn.filter((ref) => ref.deref() !== undefined).length;
    expect(alive).toBeLessThanOrEqual(2);
    await read.close();
  });

  test("of several attempts, the first that returns rows answers; one without rows is closed before the next runs", async () => {
    const signal = new AbortController().signal;
    const second = await openRead<Buffer[]>(sql, [{ statement: NONE, batchSize: 10 }, { statement: ONE, batchSize: 10 }], { signal, firstBatchTimeoutMs: 10_000 });
    const first = await openRead<Buffer[]>(sql, [{ statement: ONE, batchSize: 10 }, { statement: MANY, batchSize: 10 }], { signal, firstBatchTimeoutMs: 10_000 });
    const last = await openRead<Buffer[]>(sql, [{ statement: NONE, batchSize: 10 }, { statement: NONE, batchSize: 10 }], { signal, firstBatchTimeoutMs: 10_000 });
    expect([second, first, last].map((r) => ({ answered: r.answered, first: r.first.map((row) => row[0]!.toString()) }))).toEqual([
      { answered: 1, first: ["one"] },
      { answered: 0, first: ["one"] },
      { answered: 1, first: [] },
    ]);
    await Promise.all([second.close(), first.close(), last.close()]);
  });
});
