// A connection that fails while starting is told apart: a server that is not PostgreSQL
// (NOT_POSTGRESQL, quoting what it said) from PostgreSQL itself down, slow or restarting.
import { expect, test } from "bun:test";
import { identifyPeer, NotPostgresqlError } from "../../src/database/not-postgresql.ts";
import { SERVER_URL } from "../support/database.ts";
import { describeWithPostgres } from "../support/postgres.ts";

/** A peer: `greeting` on connect, `reply` to what it is sent (then it closes), or neither. */
function peer(options: { greeting?: string; reply?: string; drop?: boolean }) {
  let accepted = 0;
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open: (s) => {
        accepted++;
        if (options.greeting) s.write(options.greeting);
        if (options.drop) s.end();
      },
      data: (s) => void (options.reply !== undefined && s.end(options.reply)),
    },
  });
  const failure = (code: string) => Object.assign(new Error(`write ${code} 127.0.0.1:${listener.port}`), { code, address: "127.0.0.1", port: listener.port });
  return { port: listener.port, accepted: () => accepted, failure, stop: () => listener.stop(true) };
}

describeWithPostgres("telling a server that is not PostgreSQL", () => {
  test("an HTTP server, one that closes at once, and one that speaks first are NOT_POSTGRESQL, with what they said", async () => {
    const http = peer({ reply: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" });
    const dropper = peer({ drop: true });
    const ssh = peer({ greeting: "SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n" });
    try {
      const found = await Promise.all([
        identifyPeer(http.failure("CONNECTION_CLOSED")),
        identifyPeer(dropper.failure("ECONNRESET")),
        identifyPeer(ssh.failure("CONNECT_TIMEOUT")),
      ]);
      expect(found.every((e) => e instanceof NotPostgresqlError && e.code === "NOT_POSTGRESQL")).toBe(true);
      expect(found.map((e) => (e as Error).message)).toEqual([
        `the server at 127.0.0.1:${http.port} is not a PostgreSQL server: it answered "HTTP/1.1 400 Bad Request Content-Length: 0 Connection: clo"`,
        `the server at 127.0.0.1:${dropper.port} is not a PostgreSQL server: it closed the connection without answering`,
        `the server at 127.0.0.1:${ssh.port} is not a PostgreSQL server: it answered "SSH-2.0-OpenSSH_9.2p1 Debian-2"`,
      ]);
    } finally {
      [http, dropper, ssh].forEach((p) => p.stop());
    }
  });

  test("a reset read from the socket names no peer: the pool's only host is asked (the e2e test failed one run in four on it)", async () => {
    const http = peer({ reply: "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n" });
    try {
      const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104, syscall: "read" });
      const found = await identifyPeer(reset, { options: { host: ["127.0.0.1"], port: [http.port] } });
      expect(found).toBeInstanceOf(NotPostgresqlError);
      expect((found as Error).message).toStartWith(`the server at 127.0.0.1:${http.port} is not a PostgreSQL server: it answered "HTTP/1.1 400`);
      // Several hosts: which one reset is not known, so none is asked; nor a Unix socket.
      expect(await identifyPeer(reset, { options: { host: ["127.0.0.1", "127.0.0.2"], port: [http.port, http.port] } })).toBe(reset);
      expect(await identifyPeer(reset, { options: { host: ["/run/postgresql"], port: [5432] } })).toBe(reset);
      expect(await identifyPeer(reset)).toBe(reset);
      expect(http.accepted()).toBe(1);
    } finally {
      http.stop();
    }
  });

  test("PostgreSQL itself, a peer that says nothing, and other failures are left as they are", async () => {
    const server = new URL(SERVER_URL);
    const postgresql = Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED", address: server.hostname, port: Number(server.port || 5432) });
    expect(await identifyPeer(postgresql)).toBe(postgresql);

    const silent = peer({});
    try {
      const timedOut = silent.failure("CONNECT_TIMEOUT");
      const started = performance.now();
      expect(await identifyPeer(timedOut)).toBe(timedOut);
      expect(performance.now() - started).toBeLessThan(1500);

      // Only a failure while starting that names a host and port is asked about.
      const others = [
        Object.assign(new Error("refused"), { code: "ECONNREFUSED", address: "127.0.0.1", port: silent.port }),
        Object.assign(new Error("closed"), { code: "CONNECTION_CLOSED", address: ["127.0.0.1"], port: [silent.port] }),
        Object.assign(new Error("closed"), { code: "CONNECTION_CLOSED", address: "/run/postgresql/.s.PGSQL.5432" }),
        new Error("no code"),
        undefined,
      ];
      for (const err of others) expect(await identifyPeer(err)).toBe(err);
      expect(silent.accepted()).toBe(1);
    } finally {
      silent.stop();
    }
  });
});
