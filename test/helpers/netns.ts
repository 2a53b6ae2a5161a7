// Network namespaces for tests that need a caller that is not on loopback. Two namespaces joined
// by a veth pair, with addresses from 198.18.0.0/24 (a benchmark range that is never routed);
// nothing is added to the host's own namespace. Needs root (CAP_NET_ADMIN) and iproute2.
import { execFile } from "node:child_process";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface NamespacePair {
  /** Namespace names: `a` holds `addressA`, `b` holds `addressB`. */
  readonly a: string;
  readonly b: string;
  readonly addressA: string;
  readonly addressB: string;
  /** Runs `argv` inside namespace `ns`; resolves with its stdout. */
  exec(ns: string, argv: readonly string[]): Promise<string>;
  remove(): Promise<void>;
}

/** Why namespaces cannot be made here, or undefined when they can. */
export async function netnsUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0) return "network namespaces need root (CAP_NET_ADMIN)";
  try {
    await run("ip", ["netns", "list"]);
    return undefined;
  } catch (err) {
    return `iproute2 'ip netns' is not usable: ${String(err)}`;
  }
}

/** Creates two namespaces joined by a veth pair (198.18.0.<hostA> and .<hostB>, /24). */
export async function namespacePair(tag: string, hostA: number, hostB: number): Promise<NamespacePair> {
  const a = `hc${tag}a${process.pid}`;
  const b = `hc${tag}b${process.pid}`;
  const addressA = `198.18.0.${hostA}`;
  const addressB = `198.18.0.${hostB}`;
  const ip = (...args: string[]) => run("ip", args);
  const pair: NamespacePair = {
    a,
    b,
    addressA,
    addressB,
    exec: async (ns, argv) => (await run("ip", ["netns", "exec", ns, ...argv], { maxBuffer: 1 << 20 })).stdout,
    remove: async () => {
      await ip("netns", "del", a).catch(() => undefined);
      await ip("netns", "del", b).catch(() => undefined);
    },
  };
  try {
    await ip("netns", "add", a);
    await ip("netns", "add", b);
    await ip("link", "add", "veth-a", "netns", a, "type", "veth", "peer", "name", "veth-b", "netns", b);
    await ip("-n", a, "addr", "add", `${addressA}/24`, "dev", "veth-a");
    await ip("-n", b, "addr", "add", `${addressB}/24`, "dev", "veth-b");
    for (const [ns, dev] of [[a, "veth-a"], [b, "veth-b"], [a, "lo"], [b, "lo"]] as const) await ip("-n", ns, "link", "set", dev, "up");
  } catch (err) {
    await pair.remove();
    throw err;
  }
  return pair;
}

/** A script for `node -e` that GETs `url` (with `headers`) and prints `{status, body}` as JSON. */
export function fetchScript(url: string, headers: Record<string, string> = {}, method = "GET", body?: string): string {
  return `fetch(${JSON.stringify(url)}, { method: ${JSON.stringify(method)}, headers: ${JSON.stringify(headers)}, body: ${body === undefined ? "undefined" : JSON.stringify(body)} })
    .then(async (r) => console.log(JSON.stringify({ status: r.status, body: await r.text() })))
    .catch((e) => console.log(JSON.stringify({ status: 0, body: String(e) })));`;
}
