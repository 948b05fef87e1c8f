// sd_notify(3) for a Type=notify unit: one datagram to the AF_UNIX socket systemd names in
// NOTIFY_SOCKET ("READY=1", "STOPPING=1", "RELOADING=1"...). Bun has no datagram Unix
// sockets (Bun.connect and node:net speak streams, node:dgram UDP), so the three libc calls
// it takes go through bun:ffi; why that and not a child `systemd-notify`: docs/architecture.md
// (systemd readiness). Outside systemd (no NOTIFY_SOCKET) every call is a no-op.

import { dlopen, FFIType, ptr } from "bun:ffi";

const AF_UNIX = 1;
const SOCK_DGRAM = 2;
const SOCK_CLOEXEC = 0o2000000;
const MSG_NOSIGNAL = 0x4000;
/** sizeof(struct sockaddr_un): sa_family_t (2 bytes) and sun_path[108]. */
const SOCKADDR_UN_SIZE = 110;

export interface Notifier {
  /** Whether systemd asked to be told (NOTIFY_SOCKET is set). */
  readonly enabled: boolean;
  /** Sends one state message ("READY=1", ...); throws with the cause when it cannot. */
  notify(state: string): void;
}

/** The socket address systemd gave: a path, or an abstract name ("@..."). Throws when malformed. */
export function notifySocketAddress(value: string): Uint8Array {
  const name = value.startsWith("@") ? "\0" + value.slice(1) : value;
  if (!value.startsWith("/") && !value.startsWith("@")) throw new Error(`NOTIFY_SOCKET is neither a path nor an abstract socket: ${JSON.stringify(value)}`);
  const bytes = new TextEncoder().encode(name);
  if (bytes.length >= SOCKADDR_UN_SIZE - 2) throw new Error("NOTIFY_SOCKET is too long for a Unix socket address");
  const address = new Uint8Array(2 + bytes.length + (value.startsWith("@") ? 0 : 1)); // a path ends with its NUL; an abstract name has none
  new DataView(address.buffer).setUint16(0, AF_UNIX, true);
  address.set(bytes, 2);
  return address;
}

/** The notifier for this process: libc's socket(2), sendto(2) and close(2) when NOTIFY_SOCKET is set. */
export function systemdNotifier(env: Record<string, string | undefined> = process.env): Notifier {
  const socketPath = env.NOTIFY_SOCKET;
  if (!socketPath) return { enabled: false, notify: () => {} };
  const address = notifySocketAddress(socketPath);
  const libc = dlopen("libc.so.6", {
    socket: { args: [FFIType.i32, FFIType.i32, FFIType.i32], returns: FFIType.i32 },
    sendto: { args: [FFIType.i32, FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.ptr, FFIType.u32], returns: FFIType.i64 },
    close: { args: [FFIType.i32], returns: FFIType.i32 },
  });
  return {
    enabled: true,
    notify(state: string) {
      const message = new TextEncoder().encode(state);
      const fd = libc.symbols.socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
      if (fd < 0) throw new Error("sd_notify: socket(AF_UNIX, SOCK_DGRAM) failed");
      try {
        const sent = libc.symbols.sendto(fd, ptr(message), message.length, MSG_NOSIGNAL, ptr(address), address.length);
        if (Number(sent) !== message.length) throw new Error(`sd_notify: sendto ${socketPath} failed`);
      } finally {
        libc.symbols.close(fd);
      }
    },
  };
}
