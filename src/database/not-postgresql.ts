// Tells a server that is not PostgreSQL from a database that is down. postgres.js reports such
// a peer only as a connection closed, reset or timed out while starting, naming its host and
// port; asked what every PostgreSQL server answers at once to an SSLRequest (S or N, one byte),
// the peer shows what it is. Anything else (an HTTP reply, an SSH banner, a close without a
// word) is NOT_POSTGRESQL (problems.ts), quoting what it said. Unix sockets are not asked: the
// embedded database's is ours, and one named like PostgreSQL's is PostgreSQL's.

const SSL_REQUEST = new Uint8Array([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]); // length 8, code 80877103
const ASK_TIMEOUT_MS = 1000;
const STARTUP_FAILURES = new Set(["CONNECTION_CLOSED", "ECONNRESET", "CONNECT_TIMEOUT"]);

export class NotPostgresqlError extends Error {
  readonly code = "NOT_POSTGRESQL";
  constructor(where: string, answer: Uint8Array) {
    const said = Buffer.from(answer.subarray(0, 60)).toString("latin1").replace(/[^\x20-\x7e]+/g, " ").trim();
    super(`the server at ${where} is not a PostgreSQL server: ${said ? `it answered "${said}"` : "it closed the connection without answering"}`);
  }
}

/**
 * The peer's first answer to an SSLRequest (empty: it closed); the error when no connection
 * could be made (refused: nothing listens there, a server stopped or stopping; unreachable);
 * undefined when nothing came in time. Also silence.ts's question: is a database there at all.
 */
export async function firstAnswer(hostname: string, port: number, timeoutMs = ASK_TIMEOUT_MS): Promise<Uint8Array | Error | undefined> {
  const { promise, resolve } = Promise.withResolvers<Uint8Array | Error | undefined>();
  const timer = setTimeout(() => resolve(undefined), timeoutMs); // a silent peer, or a host that drops the connect itself
  const failed = (err: unknown) => resolve(err instanceof Error ? err : new Error(String(err)));
  const connecting = Bun.connect({
    hostname,
    port,
    socket: { open: (s) => void s.write(SSL_REQUEST), data: (_, data) => resolve(data), close: () => resolve(new Uint8Array()), error: (_, err) => failed(err) },
  });
  connecting.catch(failed);
  const answer = await promise;
  clearTimeout(timer);
  connecting.then((socket) => socket.end(), () => {});
  return answer;
}

/** Where a pool connects (postgres.js's options): a reset read from the socket names no peer, so it is asked here. */
export interface PoolTarget {
  options: { host: readonly string[]; port: readonly number[] };
}

/**
 * `err`, or NotPostgresqlError when `err` is a connection that failed while starting and its
 * peer turns out not to speak PostgreSQL. Costs one connection to that peer, and only then.
 * The peer is the one `err` names or, for a socket's own error (a reset: `read ECONNRESET`,
 * no address), `pool`'s only host.
 */
export async function identifyPeer(err: unknown, pool?: PoolTarget): Promise<unknown> {
  const named = (err ?? {}) as { code?: unknown; address?: unknown; port?: unknown };
  const { code } = named;
  const only = pool?.options.host.length === 1 && named.address === undefined ? { address: pool.options.host[0], port: pool.options.port[0] } : undefined;
  const { address, port } = only ?? named;
  if (typeof code !== "string" || !STARTUP_FAILURES.has(code) || typeof address !== "string" || address.startsWith("/") || typeof port !== "number") return err;
  const answer = await firstAnswer(address, port);
  if (!(answer instanceof Uint8Array)) return err; // nothing to tell: no connection, or no word
  const postgresql = answer.length === 1 && (answer[0] === 0x53 || answer[0] === 0x4e); // S or N
  return postgresql ? err : new NotPostgresqlError(`${address}:${port}`, answer);
}
