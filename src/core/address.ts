// Listener addresses: "host:port", ":port" (every interface) or "[v6]:port".

/** A parsed listen or peer address. `host` is empty for "every interface". */
export interface Address {
  readonly host: string;
  readonly port: number;
}

/** Parses an address; undefined when malformed or the port is outside 0..65535. */
export function parseAddress(text: string): Address | undefined {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(text);
  if (!m) return undefined;
  const port = Number(m[3]);
  if (port > 65535) return undefined;
  return Object.freeze({ host: m[1] ?? m[2] ?? "", port });
}

/** Formats an address back to its text form. */
export function formatAddress(a: Address): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

/** The host to dial for an address: an empty (every-interface) host dials the loopback. */
export function dialHost(a: Address): string {
  return isUnspecifiedHost(a.host) ? "127.0.0.1" : a.host;
}

/** True for a host that names no interface: empty (every interface), 0.0.0.0 or ::. */
export function isUnspecifiedHost(host: string): boolean {
  return host === "" || host === "0.0.0.0" || host === "::" || /^[0:]+$/.test(host);
}

/**
 * True for a host:port peers can dial: an address with an unspecified host (":7946",
 * "0.0.0.0:7946", "[::]:7946") names no host anyone could reach.
 */
export function isDialable(address: string): boolean {
  const a = parseAddress(address);
  return a !== undefined && !isUnspecifiedHost(a.host);
}
