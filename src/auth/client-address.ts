// The key under which a client's failed authentications, password checks and anonymous request
// budget are counted. An IPv4 address counts alone. An IPv6 address counts by its /64: a /64 is
// what one host or one subscriber line is given, and any host on it can use as many of its 2^64
// addresses as it likes, so counting each address alone gave an attacker a fresh budget (and a
// check that is not suspect) per request. An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`, what a
// dual-stack listener reports for an IPv4 client) counts as the IPv4 address it carries.
import { isIPv6 } from "node:net";

const MAPPED_V4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** `address` (as `socket.remoteAddress` gives it) reduced to the unit the auth limits count by. */
export function clientAddressKey(address: string | undefined): string {
  if (address === undefined) return "";
  if (!address.includes(":")) return address;
  const mapped = MAPPED_V4.exec(address);
  if (mapped !== null) return mapped[1] as string;
  const zone = address.indexOf("%");
  const bare = zone === -1 ? address : address.slice(0, zone);
  if (!isIPv6(bare)) return address;
  return `${firstFourGroups(bare).join(":")}::/64`;
}

/** The first four 16-bit groups of a valid IPv6 address, lower-case hex without leading zeros. */
function firstFourGroups(address: string): string[] {
  const gap = address.indexOf("::");
  const head = groupsOf(gap === -1 ? address : address.slice(0, gap));
  const tail = gap === -1 ? [] : groupsOf(address.slice(gap + 2));
  const all = [...head, ...Array<string>(8 - head.length - tail.length).fill("0"), ...tail];
  return all.slice(0, 4).map((g) => Number.parseInt(g, 16).toString(16));
}

/** The 16-bit groups of part of an address, a dotted IPv4 tail counted as two. */
function groupsOf(part: string): string[] {
  if (part === "") return [];
  const groups = part.split(":");
  const last = groups[groups.length - 1] as string;
  if (!last.includes(".")) return groups;
  const [a, b, c, d] = last.split(".").map(Number) as [number, number, number, number];
  return [...groups.slice(0, -1), ((a << 8) | b).toString(16), ((c << 8) | d).toString(16)];
}
