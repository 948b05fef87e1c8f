// Tells a database that went silent from one that is only slow. A network partition, or a
// proxy or NAT between the service and PostgreSQL that stops passing bytes, closes nothing:
// postgres.js keeps waiting on the sockets it has, and a query written to a pooled
// connection that looks sound waits too, until the statement deadline (30 s and more).
// TCP cannot tell: the kernel of a proxy on the way keeps acknowledging, so keepalives and
// TCP_USER_TIMEOUT see a healthy peer (and node:net, as Bun has it, sets keepalive's idle
// time only: no interval, count or user timeout). And no byte from PostgreSQL is due while it
// runs a long statement.
// So a read that waits on the database asks the server, on a new connection, the question
// every PostgreSQL answers at once without a session (an SSLRequest: one byte); a database
// that answers is slow, not silent, and the read waits on, up to STATEMENT_TIMEOUT_MS. One
// question at a time is shared by every waiting read.

import { firstAnswer } from "./not-postgresql.ts";

/** A read waited while the database, asked on a new connection, did not answer either. */
export class DatabaseSilentError extends Error {
  readonly code = "DATABASE_SILENT";
  constructor(ms: number) {
    super(`no answer from the database within ${ms} ms, nor to a new connection: the network or a proxy between passes no bytes`);
  }
}

/** Whether some host answers on a new connection within `timeoutMs`. */
export type AskDatabase = (timeoutMs: number) => Promise<boolean>;

export interface SilenceWatch {
  /**
   * Watches a wait on the database: `silent` rejects with DatabaseSilentError about
   * `afterMs` after the database stopped answering (or after `watch()` when it answered
   * nothing since), and never settles while it answers. `stop()` when the wait is over.
   */
  watch(): { silent: Promise<never>; stop(): void };
}

// An answer this recent stands for every read that asks meanwhile: at most a few questions a second.
const ANSWER_REUSE_MS = 200;

/**
 * Every `afterMs / 2` of a wait the database is asked, and given `afterMs / 2` to answer:
 * a silence is seen within `afterMs` of its start, a new read on a silent database fails
 * `afterMs` after it began.
 */
export function createSilenceWatch(ask: AskDatabase, afterMs: number, now: () => number = () => performance.now()): SilenceWatch {
  const step = Math.max(1, Math.floor(afterMs / 2));
  let asking: Promise<boolean> | undefined;
  let answeredAt = -Infinity;
  const answers = (): Promise<boolean> => {
    if (now() - answeredAt < ANSWER_REUSE_MS) return Promise.resolve(true);
    asking ??= ask(step)
      .catch(() => false)
      .then((answered) => {
        asking = undefined;
        if (answered) answeredAt = now();
        return answered;
      });
    return asking;
  };
  return {
    watch() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      let stopped = false;
      const silent = new Promise<never>((_, reject) => {
        const check = () => {
          void answers().then((answered) => {
            if (stopped) return;
            if (!answered) return reject(new DatabaseSilentError(afterMs));
            timer = setTimeout(check, step);
          });
        };
        timer = setTimeout(check, step);
      });
      silent.catch(() => {}); // a rejection nobody races any more is not unhandled
      return {
        silent,
        stop() {
          stopped = true;
          clearTimeout(timer);
        },
      };
    },
  };
}

/**
 * Asks each host (TCP) at once; the database answers when one of them does. A connection
 * refused (or a host unreachable) is an answer too: something on the way says the server is
 * not there (stopping, stopped, restarting), which is no silence of the network. Taken for
 * one, an ordinary shutdown was reported as "the network or a proxy" (issue 42).
 */
export function askHosts(hosts: readonly string[], ports: readonly number[]): AskDatabase {
  return async (timeoutMs) => {
    const asked = hosts.map(async (host, i) => {
      const answer = await firstAnswer(host, ports[i] ?? ports[0]!, timeoutMs);
      if (answer === undefined) throw new Error("no answer");
    });
    return await Promise.any(asked).then(
      () => true,
      () => false,
    );
  };
}
