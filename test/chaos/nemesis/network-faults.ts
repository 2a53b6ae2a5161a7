// Faults on the lab network: partitions as nftables drop rules inside node namespaces (one atomic
// ruleset per namespace; heal deletes the table) for one node cut off, a split, a bridge and one
// cut link; a flapping link (the node's bridge port down and up every second), and a slow link
// (peer traffic of one node through a 200 ms delaying proxy).
// The driver keeps reaching every node except while a flapping link is down.
import { DRIVER_ADDRESS } from "../net/addresses.js";
import type { NetLab } from "../net/netns.js";
import { DelayProxy } from "../net/tcp-proxy.js";
import type { ChaosNode } from "../proc/chaos-node.js";
import { sleep, type Nemesis, type NemesisContext } from "./nemesis.js";

function labOf(ctx: NemesisContext): NetLab {
  const lab = ctx.cluster.lab;
  if (!lab) throw new Error("this nemesis needs the lab network");
  return lab;
}

/** Cuts every node of `a` from every node of `b` (rules on the `a` side, both directions). */
async function cutBetween(lab: NetLab, a: readonly ChaosNode[], b: readonly ChaosNode[]): Promise<void> {
  const peers = b.map((n) => n.spec.host);
  await Promise.all(a.map((n) => lab.cut(n.id, peers)));
}

async function healCuts(ctx: NemesisContext): Promise<void> {
  const lab = labOf(ctx);
  await Promise.all(ctx.cluster.nodes.map((n) => lab.uncut(n.id)));
}

const ids = (nodes: readonly ChaosNode[]) => nodes.map((n) => n.id);

export const isolateNemesis: Nemesis = {
  name: "isolate",
  needsNetwork: true,
  description: "cut one node from every other node (clients still reach it)",
  async run(ctx) {
    const nodes = ctx.cluster.nodes;
    const target = ctx.random.pick(nodes);
    await cutBetween(labOf(ctx), [target], nodes.filter((n) => n !== target));
    await sleep(ctx.faultMs);
    return { isolated: target.id };
  },
  heal: healCuts,
};

/** A majority|minority split: 3|2 for five nodes. */
export const splitNemesis: Nemesis = {
  name: "split",
  needsNetwork: true,
  description: "split the cluster into a majority and a minority (3|2 for five nodes)",
  async run(ctx) {
    const shuffled = ctx.random.shuffle(ctx.cluster.nodes);
    const majority = shuffled.slice(0, Math.floor(shuffled.length / 2) + 1);
    const minority = shuffled.slice(majority.length);
    await cutBetween(labOf(ctx), minority, majority);
    await sleep(ctx.faultMs);
    return { majority: ids(majority), minority: ids(minority) };
  },
  heal: healCuts,
};

/** A bridge: two halves that cannot see each other, and one node that sees both (A↔B↔C). */
export const bridgeNemesis: Nemesis = {
  name: "bridge",
  needsNetwork: true,
  description: "two halves cut from each other, one bridge node seeing both",
  async run(ctx) {
    const [bridge, ...rest] = ctx.random.shuffle(ctx.cluster.nodes);
    const left = rest.slice(0, Math.floor(rest.length / 2));
    const right = rest.slice(left.length);
    await cutBetween(labOf(ctx), left, right);
    await sleep(ctx.faultMs);
    return { bridge: bridge?.id, left: ids(left), right: ids(right) };
  },
  heal: healCuts,
};

/**
 * One cut link: two nodes that cannot reach each other while every other link works, so each
 * still hears of the other through the rest (gossip, indirect probes): a partial partition.
 */
export const cutLinkNemesis: Nemesis = {
  name: "cut-link",
  needsNetwork: true,
  description: "cut the link between two nodes only (each still reaches every other node)",
  async run(ctx) {
    const [a, b] = ctx.random.shuffle(ctx.cluster.nodes);
    if (!a || !b) throw new Error("cut-link needs two nodes");
    await cutBetween(labOf(ctx), [a], [b]);
    await sleep(ctx.faultMs);
    return { cut: [a.id, b.id] };
  },
  heal: healCuts,
};

export const FLAP_PERIOD_MS = 1_000;

export const flapNemesis: Nemesis = {
  name: "flap",
  needsNetwork: true,
  description: "one node's link goes down and up every second (cut from everyone, the driver included, while down)",
  async run(ctx) {
    const lab = labOf(ctx);
    const target = ctx.random.pick(ctx.cluster.nodes);
    const end = performance.now() + ctx.faultMs;
    let flips = 0;
    let up = true;
    while (performance.now() < end) {
      up = !up;
      await lab.setLink(target.id, up);
      flips++;
      await sleep(FLAP_PERIOD_MS);
    }
    await lab.setLink(target.id, true);
    return { target: target.id, flips };
  },
  async heal(ctx) {
    const lab = labOf(ctx);
    await Promise.all(ctx.cluster.nodes.map((n) => lab.setLink(n.id, true)));
  },
};

export const SLOW_LINK_DELAY_MS = 200;

/** A slow-link nemesis; it owns the proxy of its running fault until heal. */
export function createSlowLinkNemesis(): Nemesis {
  let activeProxy: DelayProxy | undefined;
  return {
    name: "slow-link",
    needsNetwork: true,
    description: "every peer connection of one node goes through a proxy adding 200 ms each way",
    async run(ctx) {
      const lab = labOf(ctx);
      const nodes = ctx.cluster.nodes;
      const target = ctx.random.pick(nodes);
      const proxyPort = (n: ChaosNode) => ctx.proxyPortBase + nodes.indexOf(n);
      const proxy = new DelayProxy(SLOW_LINK_DELAY_MS);
      activeProxy = proxy;
      await proxy.listen(nodes.map((n) => ({ listenHost: DRIVER_ADDRESS, listenPort: proxyPort(n), targetHost: n.spec.host, targetPort: n.spec.distPort })));
      const redirect = (n: ChaosNode) => ({ address: n.spec.host, port: n.spec.distPort, proxyAddress: DRIVER_ADDRESS, proxyPort: proxyPort(n) });
      const others = nodes.filter((n) => n !== target);
      await lab.slow(target.id, others.map(redirect));
      await Promise.all(others.map((n) => lab.slow(n.id, [redirect(target)])));
      await sleep(ctx.faultMs);
      return { target: target.id, delay_ms: SLOW_LINK_DELAY_MS };
    },
    async heal(ctx) {
      const lab = labOf(ctx);
      await Promise.all(ctx.cluster.nodes.map((n) => lab.unslow(n.id)));
      // proxied connections keep their NAT mapping: cutting them makes both ends reconnect directly
      await activeProxy?.close();
      activeProxy = undefined;
    },
  };
}
