// The client address a request log line shows: the TCP peer, or, when the peer is one of
// the operator's trusted reverse proxies (TRUSTED_PROXIES), the address those proxies report
// in X-Forwarded-For. The header is read from the right (the entry the nearest proxy added)
// and trusted proxies are skipped; the first address that is not one is the client. A
// client can write anything into the header, so nothing left of an untrusted entry counts.

import { BlockList, isIP } from "node:net";
import { parseTrustedProxies } from "../settings/trusted-proxies.ts";

/** "::ffff:10.0.0.1" as the IPv4 address it is. */
function plain(address: string): string {
  return address.startsWith("::ffff:") && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}

export type ClientAddress = (peer: string | undefined, forwardedFor: string | null) => string | undefined;

export function clientAddress(trustedProxies: string | undefined): ClientAddress {
  const { entries } = parseTrustedProxies(trustedProxies ?? "");
  if (entries.length === 0) return (peer) => (peer === undefined ? undefined : plain(peer));
  const list = new BlockList();
  for (const e of entries) {
    if (e.prefix === undefined) list.addAddress(e.address, e.family);
    else list.addSubnet(e.address, e.prefix, e.family);
  }
  const trusted = (address: string) => {
    const version = isIP(address);
    return version !== 0 && list.check(address, version === 4 ? "ipv4" : "ipv6");
  };
  return (peer, forwardedFor) => {
    if (peer === undefined) return undefined;
    let client = plain(peer);
    if (!trusted(peer) || !forwardedFor) return client;
    const hops = forwardedFor.split(",").map((s) => s.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = plain(hops[i]!);
      // Not an address: whoever wrote it is not to be believed; the last trusted hop is what we know.
      if (isIP(hop) === 0) return client;
      client = hop;
      if (!trusted(hop)) return client;
    }
    return client;
  };
}
