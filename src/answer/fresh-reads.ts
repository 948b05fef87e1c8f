// Identical reads shared between callers without ever answering from before a caller
// arrived. A caller joins the next read of its key that has not started yet, starting one
// when none is running; never one already running, whose snapshot may predate the caller.
// So a write committed before a caller arrived is in its answer, exactly as if it had read
// alone, and under load one read serves every caller that arrived during the one before:
// N callers of one key cost about one read per round trip instead of N.

/** Reads `key`; `signal` aborts once every caller waiting for it has left. */
export type KeyedRead<T, K = string> = (key: K, signal: AbortSignal) => Promise<T>;

interface Read<T> {
  answer: Promise<T>;
  settle: { resolve: (value: T) => void; reject: (reason: unknown) => void };
  waiting: number;
  left: AbortController;
}

function newRead<T>(): Read<T> {
  const { promise, resolve, reject } = Promise.withResolvers<T>();
  promise.catch(() => {}); // every caller may have left: a failure nobody waits for is no crash
  return { answer: promise, settle: { resolve, reject }, waiting: 0, left: new AbortController() };
}

/** `read`, shared by the callers of one key; keys are the same when `idOf` says so (default: they are strings). */
export function freshReads<T, K = string>(read: KeyedRead<T, K>, idOf: (key: K) => string = String): KeyedRead<T, K> {
  const keys = new Map<string, { running?: Read<T>; next?: Read<T> }>();

  const start = (id: string, key: K) => {
    const state = keys.get(id)!;
    const next = state.next;
    state.next = undefined;
    if (!next || next.waiting === 0) return void keys.delete(id); // nobody waits for it any more
    state.running = next;
    read(key, next.left.signal)
      .then(next.settle.resolve, next.settle.reject)
      .finally(() => {
        state.running = undefined;
        start(id, key);
      });
  };

  return async (key, signal) => {
    signal.throwIfAborted();
    const id = idOf(key);
    let state = keys.get(id);
    if (!state) keys.set(id, (state = {}));
    const joined = (state.next ??= newRead<T>());
    joined.waiting++;
    if (!state.running) start(id, key);
    const { promise: gone, reject } = Promise.withResolvers<never>();
    const leave = () => {
      reject(signal.reason);
      // The last caller of a running read gone: stop it (a queued one is dropped at its start).
      if (--joined.waiting === 0 && keys.get(id)?.running === joined) joined.left.abort(signal.reason);
    };
    signal.addEventListener("abort", leave, { once: true });
    try {
      return await Promise.race([joined.answer, gone]);
    } finally {
      signal.removeEventListener("abort", leave);
    }
  };
}
