// A port on 127.0.0.1 that nothing listens on right now: the kernel's choice for a socket
// opened and closed at once. For a server to start on, or for a host that is down.

export function unusedPort(): number {
  const probe = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = probe.port;
  probe.stop(true);
  return port;
}
