// Which addresses url_fetch may connect to: public unicast only. Every spelling of an IPv4 address
// (decimal, octal, hex, short forms, percent-encoded, full-width digits) reaches here already in
// dotted form: WHATWG URL parsing normalises the host before anything else sees it, and the name
// lookups return canonical forms too. IPv6 is checked by its parsed groups, so `::ffff:127.0.0.1`,
// `::ffff:7f00:1` and `0:0:0:0:0:ffff:7f00:1` are one address.
import net from "node:net";

const V4_BLOCKS: [string, number, string][] = [
  ["0.0.0.0", 8, "unspecified (this network)"],
  ["10.0.0.0", 8, "private"],
  ["100.64.0.0", 10, "carrier-grade NAT (shared)"],
  ["127.0.0.0", 8, "loopback"],
  ["169.254.0.0", 16, "link-local (cloud metadata lives here)"],
  ["172.16.0.0", 12, "private"],
  ["192.0.0.0", 24, "IETF protocol assignments"],
  ["192.0.2.0", 24, "documentation"],
  ["192.88.99.0", 24, "6to4 relay"],
  ["192.168.0.0", 16, "private"],
  ["198.18.0.0", 15, "benchmarking"],
  ["198.51.100.0", 24, "documentation"],
  ["203.0.113.0", 24, "documentation"],
  ["224.0.0.0", 4, "multicast"],
  ["240.0.0.0", 4, "reserved (and broadcast)"],
];

const V6_BLOCKS: [string, number, string][] = [
  ["::", 128, "unspecified"],
  ["::1", 128, "loopback"],
  ["::", 96, "IPv4-compatible (deprecated)"],
  ["::ffff:0:0", 96, "IPv4-mapped"],
  ["::ffff:0:0:0", 96, "IPv4-translated"],
  ["64:ff9b::", 96, "IPv4/IPv6 translation (NAT64)"],
  ["64:ff9b:1::", 48, "IPv4/IPv6 translation (local NAT64)"],
  ["100::", 64, "discard-only"],
  ["2001::", 23, "IETF protocol assignments (Teredo and others)"],
  ["2001:db8::", 32, "documentation"],
  ["2002::", 16, "6to4 (embeds an IPv4 address)"],
  ["fc00::", 7, "unique local (private)"],
  ["fe80::", 10, "link-local"],
  ["fec0::", 10, "site-local (deprecated)"],
  ["ff00::", 8, "multicast"],
];

interface Block {
  list: net.BlockList;
  why: string;
}

function blocks(rows: [string, number, string][], type: "ipv4" | "ipv6"): Block[] {
  return rows.map(([a, p, why]) => {
    const list = new net.BlockList();
    list.addSubnet(a, p, type);
    return { list, why };
  });
}

// Made at the first check, not at import: every `latch` start imports this file, and 30 BlockLists
// cost ~2 ms that a start without a network check does not need.
let made: { v4: Block[]; v6: Block[] } | undefined;
const tables = () => (made ??= { v4: blocks(V4_BLOCKS, "ipv4"), v6: blocks(V6_BLOCKS, "ipv6") });

/** Why latch will not connect to `ip` (a literal IPv4 or IPv6 address), or undefined for a public one. */
export function blockedReason(ip: string): string | undefined {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  const kind = net.isIP(bare);
  if (kind === 4) return tables().v4.find((b) => b.list.check(bare, "ipv4"))?.why;
  if (kind === 6) {
    if (bare.includes("%")) return "an IPv6 address with a zone (link-local)";
    return tables().v6.find((b) => b.list.check(bare, "ipv6"))?.why;
  }
  return "not an IP address";
}

/** Whether `host` (a URL's hostname, IPv6 in brackets) is an IP literal. */
export function isIpLiteral(host: string): boolean {
  const bare = host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
  return net.isIP(bare) !== 0;
}

/** The canonical text of an IP address (for comparing against operator allowances). */
export function canonicalIp(ip: string): string {
  const bare = ip.startsWith("[") && ip.endsWith("]") ? ip.slice(1, -1) : ip;
  if (net.isIP(bare) === 6) return new URL(`http://[${bare}]/`).hostname.slice(1, -1);
  return bare;
}
