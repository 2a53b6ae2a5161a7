// The key under which a client's failed authentications, password checks and anonymous request
// budget are counted. An IPv4 address counts alone, and so does an IPv4-mapped IPv6 address
// (`::ffff:10.0.0.1`, what a dual-stack listener reports for an IPv4 client) as the IPv4 address
// it carries. An IPv6 address counts alone by default (SERVICE_AUTH_IPV6_PREFIX=128): inside a
// cloud network many hosts share one /64 (a subnet), and grouping them let one host's wrong
// passwords lock out the others (an attacker review). A node that faces the internet sets a
// prefix (64 is what one host or subscriber line is given): any host can use as many of its
// prefix's addresses as it likes, and counting each alone gave it a fresh budget, and a password
// check that is not suspect, with every address it chose. With a prefix shorter than 96, an
// address of the NAT64 prefix 64:ff9b::/96 counts as the IPv4 address it embeds.
import { isIPv6 } from "node:net";

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** `address` (as `socket.remoteAddress` gives it) reduced to the unit the auth limits count by. */
export function clientAddressKey(address: string | undefined, ipv6PrefixBits = 128): string {
  if (address === undefined) return "";
  if (!address.includes(":")) return address;
  const mapped = MAPPED_V4.exec(address);
  if (mapped !== null) return mapped[1] as string;
  if (ipv6PrefixBits >= 128) return address;
  const zone = address.indexOf("%");
  const bare = zone === -1 ? address : address.slice(0, zone);
  if (!isIPv6(bare)) return address;
  const groups = expanded(bare);
  if (ipv6PrefixBits < 96 && groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0)) {
    const [hi, lo] = [groups[6] as number, groups[7] as number];
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  const masked = groups.map((g, i) => {
    const keep = Math.max(0, Math.min(16, ipv6PrefixBits - 16 * i));
    return keep === 0 ? 0 : g & ~((1 << (16 - keep)) - 1) & 0xffff;
  });
  return `${masked.map((g) => g.toString(16)).join(":")}/${ipv6PrefixBits}`;
}

/** The eight 16-bit groups of a valid IPv6 address. */
function expanded(address: string): number[] {
  const gap = address.indexOf("::");
  const head = groupsOf(gap === -1 ? address : address.slice(0, gap));
  const tail = gap === -1 ? [] : groupsOf(address.slice(gap + 2));
  return [...head, ...Array<number>(8 - head.length - tail.length).fill(0), ...tail];
}

/** The 16-bit groups of part of an address, a dotted IPv4 tail counted as two. */
function groupsOf(part: string): number[] {
  if (part === "") return [];
  const groups = part.split(":");
  const last = groups[groups.length - 1] as string;
  const hex = groups.map((g) => Number.parseInt(g, 16));
  if (!last.includes(".")) return hex;
  const [a, b, c, d] = last.split(".").map(Number) as [number, number, number, number];
  return [...hex.slice(0, -1), (a << 8) | b, (c << 8) | d];
}
