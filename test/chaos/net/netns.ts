// The harness network: a switch namespace holding a bridge, one namespace per node on a veth to the
// bridge, and one veth for the driver (this process) in the root namespace. No default routes
// anywhere: the only route is the lab /24. Faults are applied inside node namespaces only:
// nftables tables there, or the node's bridge port going down.
//
// Names all start with NS_PREFIX so `--cleanup` can find leftovers of a crashed run.
import { DRIVER_ADDRESS, LAB_CIDR } from "./addresses.js";
import type { CommandRunner } from "./commands.js";
import { cutRuleset, CUT_TABLE, deleteTable, slowRuleset, SLOW_TABLE, type Redirect } from "./nft-rules.js";

export const NS_PREFIX = "hcc-";
export const SWITCH_NS = `${NS_PREFIX}sw`;
/** The driver's veth in the root namespace (the only root-namespace interface the harness adds). */
export const DRIVER_LINK = `${NS_PREFIX}drv`;
const BRIDGE = "br0";
const PREFIX_LEN = LAB_CIDR.split("/")[1] as string;

export function nodeNamespace(nodeId: string): string {
  const ns = `${NS_PREFIX}${nodeId}`;
  // the veth's root-side name is the namespace name plus "-a": at most 15 characters
  if (ns.length > 13 || !/^[a-z0-9-]+$/.test(ns)) throw new Error(`node id ${nodeId} makes no valid namespace name`);
  return ns;
}

/** The bridge port (in the switch namespace) of a node. */
function bridgePort(nodeId: string): string {
  return `${nodeNamespace(nodeId)}-b`;
}

export class NetLab {
  private readonly nodes = new Set<string>();
  private created = false;

  constructor(private readonly run: CommandRunner) {}

  /** The switch and the driver's veth (198.18.0.254). */
  async create(): Promise<void> {
    this.created = true;
    await this.ip("netns", "add", SWITCH_NS);
    await this.ip("-n", SWITCH_NS, "link", "add", BRIDGE, "type", "bridge");
    await this.ip("-n", SWITCH_NS, "link", "set", BRIDGE, "up");
    await this.ip("link", "add", DRIVER_LINK, "type", "veth", "peer", "name", `${DRIVER_LINK}-b`, "netns", SWITCH_NS);
    await this.ip("-n", SWITCH_NS, "link", "set", `${DRIVER_LINK}-b`, "master", BRIDGE, "up");
    await this.ip("addr", "add", `${DRIVER_ADDRESS}/${PREFIX_LEN}`, "dev", DRIVER_LINK);
    await this.ip("link", "set", DRIVER_LINK, "up");
  }

  /** A namespace for one node, with `address` on its eth0 and loopback up. */
  async addNode(nodeId: string, address: string): Promise<string> {
    const ns = nodeNamespace(nodeId);
    await this.ip("netns", "add", ns);
    this.nodes.add(nodeId);
    await this.ip("link", "add", `${ns}-a`, "type", "veth", "peer", "name", bridgePort(nodeId), "netns", SWITCH_NS);
    await this.ip("link", "set", `${ns}-a`, "netns", ns);
    await this.ip("-n", ns, "link", "set", `${ns}-a`, "name", "eth0");
    await this.ip("-n", ns, "addr", "add", `${address}/${PREFIX_LEN}`, "dev", "eth0");
    await this.ip("-n", ns, "link", "set", "lo", "up");
    await this.ip("-n", ns, "link", "set", "eth0", "up");
    await this.ip("-n", SWITCH_NS, "link", "set", bridgePort(nodeId), "master", BRIDGE, "up");
    return ns;
  }

  /** Drops all traffic between this node and `peers` (one atomic ruleset). */
  async cut(nodeId: string, peers: readonly string[]): Promise<void> {
    await this.nft(nodeId, cutRuleset(peers));
  }

  async uncut(nodeId: string): Promise<void> {
    await this.nft(nodeId, deleteTable("inet", CUT_TABLE));
  }

  /** Routes this node's connections to the given peer listeners through the proxy. */
  async slow(nodeId: string, redirects: readonly Redirect[]): Promise<void> {
    await this.nft(nodeId, slowRuleset(redirects));
  }

  async unslow(nodeId: string): Promise<void> {
    await this.nft(nodeId, deleteTable("ip", SLOW_TABLE));
  }

  /** Takes the node's bridge port down (the node is cut from everyone, the driver included) or up. */
  async setLink(nodeId: string, up: boolean): Promise<void> {
    await this.ip("-n", SWITCH_NS, "link", "set", bridgePort(nodeId), up ? "up" : "down");
  }

  /** Removes every namespace this lab made (processes inside must be stopped first). */
  async destroy(): Promise<void> {
    for (const id of this.nodes) await this.ip("netns", "del", nodeNamespace(id)).catch(() => undefined);
    this.nodes.clear();
    if (this.created) {
      await this.ip("netns", "del", SWITCH_NS).catch(() => undefined);
      await this.ip("link", "del", DRIVER_LINK).catch(() => undefined);
      this.created = false;
    }
  }

  private async ip(...args: string[]): Promise<void> {
    await this.run("ip", args);
  }

  private async nft(nodeId: string, ruleset: string): Promise<void> {
    await this.run("ip", ["netns", "exec", nodeNamespace(nodeId), "nft", "-f", "-"], ruleset);
  }
}

/**
 * Removes what a crashed run left: kills the processes inside our namespaces (they are nodes this
 * harness started), deletes the namespaces and the driver's veth. Returns what it removed.
 */
export async function cleanupLeftovers(run: CommandRunner): Promise<string[]> {
  const removed: string[] = [];
  const { stdout } = await run("ip", ["netns", "list"]);
  const names = stdout
    .split("\n")
    .map((l) => l.trim().split(/\s+/)[0] ?? "")
    .filter((n) => n.startsWith(NS_PREFIX));
  for (const ns of names) {
    const pids = await run("ip", ["netns", "pids", ns]).then((r) => r.stdout.split(/\s+/).filter(Boolean), () => []);
    for (const pid of pids) {
      try {
        process.kill(Number(pid), "SIGKILL");
        removed.push(`process ${pid} in ${ns}`);
      } catch {
        // already gone
      }
    }
    await run("ip", ["netns", "del", ns]).then(() => removed.push(`namespace ${ns}`), () => undefined);
  }
  const links = await run("ip", ["-o", "link", "show", DRIVER_LINK]).then((r) => r.stdout, () => "");
  if (links.includes(DRIVER_LINK)) {
    await run("ip", ["link", "del", DRIVER_LINK]).then(() => removed.push(`link ${DRIVER_LINK}`), () => undefined);
  }
  return removed;
}
