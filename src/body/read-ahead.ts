// The memory answers are read into ahead of their clients (body.ts reads them), so that a
// slow client holds memory and a socket but not a database connection: the rows are read as
// fast as PostgreSQL hands them over, the cursor ends and the connection goes back to the
// pool, and the client takes the bytes at its own pace.
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
