// The harness network: 198.18.0.0/24 (RFC 2544 benchmarking range, never routed). Nodes get
// .11, .12, ...; the driver's veth is .254. Every target the harness connects to, and every
// address a rule names, is checked against it; loopback is allowed only in loopback mode.

export const LAB_PREFIX = "198.18.0.";
export const LAB_CIDR = "198.18.0.0/24";
export const DRIVER_ADDRESS = "198.18.0.254";
const FIRST_NODE_OCTET = 11;
/** Enough for the largest matrix (5 nodes + 2 joins) with room to spare. */
export const MAX_NODES = 40;

export function isLabAddress(host: string): boolean {
  if (!host.startsWith(LAB_PREFIX)) return false;
  const last = host.slice(LAB_PREFIX.length);
  if (!/^\d{1,3}$/.test(last)) return false;
  const n = Number(last);
  return n >= 1 && n <= 254;
}

export function assertLabAddress(host: string): void {
  if (!isLabAddress(host)) throw new Error(`refusing ${JSON.stringify(host)}: the chaos harness only targets ${LAB_CIDR}`);
}

/** The address of the node with this index (0-based). */
export function nodeAddress(index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= MAX_NODES) throw new Error(`node index ${index} out of range`);
  return `${LAB_PREFIX}${FIRST_NODE_OCTET + index}`;
}

/**
 * Throws unless the harness may connect to `host`: an address of the lab network, or loopback when
 * the harness runs without namespaces.
 */
export function assertTarget(host: string, mode: "netns" | "loopback"): void {
  if (mode === "loopback" && host === "127.0.0.1") return;
  assertLabAddress(host);
}
