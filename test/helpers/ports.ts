// Free loopback ports picked at run time.
//
// Ports are drawn below the kernel's ephemeral range (/proc/sys/net/ipv4/ip_local_port_range), not
// with listen(0): a port listen(0) gives is an ephemeral one, which any process's outgoing
// connection may take as its source port between the check and the node's own bind (a node's
// client listener failed with EADDRINUSE that way in a full test run). Below the range only
// listeners take ports, and each is checked free on 127.0.0.1 before it is handed out, never twice
// in one process.
import { readFileSync } from "node:fs";
import net from "node:net";

const LOWEST_PORT = 10_000;
/** Linux's default ephemeral range starts here; used when /proc does not say. */
const DEFAULT_EPHEMERAL_LOW = 32_768;

/** The first port of the kernel's ephemeral range (read once per process). */
export function ephemeralLow(): number {
  ephemeralLowPort ??= readEphemeralLow();
  return ephemeralLowPort;
}

let ephemeralLowPort: number | undefined;

function readEphemeralLow(): number {
  try {
    const low = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > LOWEST_PORT + 1000 ? low : DEFAULT_EPHEMERAL_LOW;
  } catch {
    return DEFAULT_EPHEMERAL_LOW;
  }
}

const handedOut = new Set<number>();

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

/** A port below the ephemeral range that was free on 127.0.0.1 a moment ago. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let attempt = 0; attempt < 1000; attempt++) {
    const port = LOWEST_PORT + Math.floor(Math.random() * (high - LOWEST_PORT + 1));
    if (handedOut.has(port)) continue;
    if (await bindable(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error(`no free port found between ${LOWEST_PORT} and ${high}`);
}

/** `n` distinct free ports. */
export async function freePorts(n: number): Promise<number[]> {
  const out: number[] = [];
  while (out.length < n) out.push(await freePort());
  return out;
}
