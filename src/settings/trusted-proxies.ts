// TRUSTED_PROXIES as written: IP addresses and CIDR ranges. Read by the configuration (to
// refuse a bad value at start) and by the client address of the log (edge/client-address.ts).

import { isIP } from "node:net";

/** Reads `a, b/24, c::/64` into its entries; the problem of the first bad one, if any. */
export function parseTrustedProxies(text: string): { entries: { address: string; prefix?: number; family: "ipv4" | "ipv6" }[]; problem?: string } {
  const entries: { address: string; prefix?: number; family: "ipv4" | "ipv6" }[] = [];
  for (const raw of text.split(",").map((s) => s.trim()).filter(Boolean)) {
    const [address = "", prefixText, extra] = raw.split("/");
    const version = isIP(address);
    const max = version === 4 ? 32 : 128;
    const prefix = prefixText === undefined ? undefined : /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
    if (version === 0 || extra !== undefined || (prefix !== undefined && !(prefix <= max))) {
      return { entries, problem: `${JSON.stringify(raw)} is not an IP address or a CIDR range (10.0.0.0/8, fd00::/8)` };
    }
    entries.push({ address, family: version === 4 ? "ipv4" : "ipv6", ...(prefix !== undefined ? { prefix } : {}) });
  }
  return { entries };
}
