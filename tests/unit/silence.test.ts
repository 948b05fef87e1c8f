// The silence watch (src/database/silence.ts) with a database stand-in whose answers the test
// decides: a database that answers is never called silent however long a wait lasts; one
// that stops answering is, within about the watch's time; waiting reads share one question.
import { expect, test } from "bun:test";
import { askHosts, createSilenceWatch, DatabaseSilentError } from "../../src/database/silence.ts";

const AFTER_MS = 200;

function standIn() {
  let answering = true;
  let asked = 0;
  const ask = async (timeoutMs: number) => {
    asked++;
    await Bun.sleep(answering ? 5 : timeoutMs);
    return answering;
  };
  return { ask, asked: () => asked, silence: () => void (answering = false) };
}

test("a database that answers is never called silent, however long the wait", async () => {
  const db = standIn();
  const watch = createSilenceWatch(db.ask, AFTER_MS).watch();
  let silent = false;
  watch.silent.catch(() => (silent = true));
  await Bun.sleep(AFTER_MS * 5);
  watch.stop();
  expect({ silent, askedAtLeast: db.asked() >= 4 }).toEqual({ silent: false, askedAtLeast: true });
});

test("a database that stops answering mid-wait is called silent within about the watch's time", async () => {
  const db = standIn();
  const watch = createSilenceWatch(db.ask, AFTER_MS).watch();
  await Bun.sleep(AFTER_MS * 2);
  db.silence();
  const started = performance.now();
  const err = await watch.silent.catch((e: unknown) => e);
  const ms = performance.now() - started;
  expect(err).toBeInstanceOf(DatabaseSilentError);
  expect((err as DatabaseSilentError).code).toBe("DATABASE_SILENT");
  expect(ms).toBeLessThan(AFTER_MS * 2);
});

test("waits that start on a silent database fail after about the watch's time, sharing one question", async () => {
  const db = standIn();
  db.silence();
  const watches = createSilenceWatch(db.ask, AFTER_MS);
  const started = performance.now();
  const errs = await Promise.all(Array.from({ length: 10 }, () => watches.watch().silent.catch((e: unknown) => e)));
  const ms = performance.now() - started;
  expect(errs.every((e) => e instanceof DatabaseSilentError)).toBe(true);
  expect(ms).toBeGreaterThanOrEqual(AFTER_MS - 5);
  expect(ms).toBeLessThan(AFTER_MS * 2);
  expect(db.asked()).toBe(1);
});

test("a stopped watch never rejects", async () => {
  const db = standIn();
  db.silence();
  const watch = createSilenceWatch(db.ask, AFTER_MS).watch();
  let settled = false;
  watch.silent.catch(() => (settled = true));
  watch.stop();
  await Bun.sleep(AFTER_MS * 2);
  expect(settled).toBe(false);
});

test("a host where nothing listens answers (refused): a stopped or stopping server, not a silent network", async () => {
  // Issue 42: a refused question was taken for silence, so PostgreSQL's ordinary shutdown was
  // reported as DATABASE_SILENT, "the network or a proxy between passes no bytes".
  const closed = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = closed.port;
  closed.stop(true);
  expect(await askHosts(["127.0.0.1"], [port])(500)).toBe(true);
  // A peer that takes the connection and never says a word is the silence.
  const mute = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    expect(await askHosts(["127.0.0.1"], [mute.port])(300)).toBe(false);
  } finally {
    mute.stop(true);
  }
});
