// Reads a streamed answer ahead of its client, into memory, so that a slow client holds
// memory and a socket but not a database connection: the rows are read as fast as
// PostgreSQL hands them over, the cursor ends and the connection goes back to the pool,
// and the client takes the bytes at its own pace.
//
// Memory stays bounded: all answers together hold at most the budget's size (an answer may
// overshoot by the one chunk it is reading), and one answer at most a quarter of it. When
// there is no room, an answer is read at its client's pace again, holding its connection, as
// before: under enough slow clients the service degrades to streaming, never to unbounded
// memory.

export interface BufferBudget {
  /** Whether another chunk may be read ahead now. */
  hasRoom(): boolean;
  take(bytes: number): void;
  give(bytes: number): void;
  /** Resolves the next time bytes are given back. */
  nextRoom(): Promise<void>;
  /** Bytes held ahead of clients right now, for metrics and tests. */
  used(): number;
  readonly maxBytes: number;
}

export function createBufferBudget(maxBytes: number): BufferBudget {
  let used = 0;
  let waiters: (() => void)[] = [];
  return {
    maxBytes,
    hasRoom: () => used < maxBytes,
    take(bytes) {
      used += bytes;
    },
    give(bytes) {
      used -= bytes;
      const woken = waiters;
      waiters = [];
      woken.forEach((wake) => wake());
    },
    nextRoom: () => new Promise<void>((resolve) => waiters.push(resolve)),
    used: () => used,
  };
}

/** `source`, read ahead into `budget`. A failure of the source reaches the client after the bytes read before it. */
export function readAhead(source: ReadableStream<Uint8Array>, budget: BufferBudget): ReadableStream<Uint8Array> {
  if (budget.maxBytes <= 0) return source;
  const ownMax = budget.maxBytes / 4;
  const reader = source.getReader();
  const queue: Uint8Array[] = [];
  let queued = 0;
  let ended = false; // the source is read to its end (or failed)
  let failure: { error: unknown } | undefined;
  let cancelled = false;
  let wakeClient: (() => void) | undefined;
  let wakeReader: (() => void) | undefined;

  const clientMayGo = () => {
    wakeClient?.();
    wakeClient = undefined;
  };
  const readerMayGo = () => {
    wakeReader?.();
    wakeReader = undefined;
  };

  const pump = async () => {
    try {
      while (!cancelled) {
        while (!cancelled && (queued >= ownMax || !budget.hasRoom())) {
          // Room comes when this client takes a chunk, or when any answer gives bytes back.
          await Promise.race([new Promise<void>((resolve) => (wakeReader = resolve)), budget.nextRoom()]);
        }
        if (cancelled) return;
        const next = await reader.read();
        if (next.done) break;
        if (cancelled) return;
        queue.push(next.value);
        queued += next.value.byteLength;
        budget.take(next.value.byteLength);
        clientMayGo();
      }
    } catch (error) {
      failure = { error };
    }
    ended = true;
    clientMayGo();
  };
  void pump();

  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        while (queue.length === 0 && !ended) await new Promise<void>((resolve) => (wakeClient = resolve));
        const chunk = queue.shift();
        if (chunk) {
          queued -= chunk.byteLength;
          budget.give(chunk.byteLength);
          controller.enqueue(chunk);
          readerMayGo();
          return;
        }
        if (failure) controller.error(failure.error);
        else controller.close();
      },
      async cancel(reason) {
        cancelled = true;
        budget.give(queued);
        queue.length = 0;
        queued = 0;
        readerMayGo();
        await reader.cancel(reason).catch(() => {});
      },
    },
    { highWaterMark: 0 },
  );
}
