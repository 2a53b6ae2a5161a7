// Faults on processes: kill -9 and restart, SIGSTOP/SIGCONT, a rolling SIGTERM restart, a skewed
// clock (libfaketime), and two nodes joining under load.
import { LIBFAKETIME, type ChaosNode } from "../proc/chaos-node.js";
import type { Cluster } from "../proc/cluster.js";
import { CATCH_UP_TIMEOUT_MS, missingFile, sleep, type Nemesis, type NemesisContext } from "./nemesis.js";

/** Restarts every node that is down and waits for it to catch up. */
async function restartDown(cluster: Cluster): Promise<string[]> {
  const restarted: string[] = [];
  for (const node of cluster.nodes) {
    node.resume();
    if (node.running) continue;
    await cluster.start(node);
    restarted.push(node.id);
  }
  for (const id of restarted) await cluster.waitCaughtUp(cluster.node(id), CATCH_UP_TIMEOUT_MS);
  return restarted;
}

function runningTarget(ctx: NemesisContext): ChaosNode {
  return ctx.random.pick(ctx.cluster.nodes.filter((n) => n.running));
}

export const killNemesis: Nemesis = {
  name: "kill",
  needsNetwork: false,
  description: "kill -9 one node, restart it with the same id after the fault",
  async run(ctx) {
    const target = runningTarget(ctx);
    await target.kill();
    await sleep(ctx.faultMs);
    return { target: target.id, down_ms: ctx.faultMs };
  },
  async heal(ctx) {
    await restartDown(ctx.cluster);
  },
};

/** SIGSTOP for 2-10 s: with the default heartbeat (1 s, dead after 6 s) some pauses outlast dead-after. */
export const PAUSE_MIN_MS = 2_000;
export const PAUSE_MAX_MS = 10_000;

export const pauseNemesis: Nemesis = {
  name: "pause",
  needsNetwork: false,
  description: "SIGSTOP one node for 2-10 s, then SIGCONT",
  async run(ctx) {
    const target = runningTarget(ctx);
    const pauseMs = ctx.random.int(PAUSE_MIN_MS, PAUSE_MAX_MS);
    target.pause();
    await sleep(pauseMs);
    target.resume();
    return { target: target.id, paused_ms: pauseMs };
  },
  async heal(ctx) {
    for (const n of ctx.cluster.nodes) n.resume();
    await restartDown(ctx.cluster);
  },
};

export const rollingRestartNemesis: Nemesis = {
  name: "rolling-restart",
  needsNetwork: false,
  description: "SIGTERM each node in turn, restart it, wait for catching_up: false before the next",
  async run(ctx) {
    const order = ctx.random.shuffle(ctx.cluster.nodes.filter((n) => n.running));
    const steps: { node: string; stop_ms: number; catch_up_ms: number }[] = [];
    for (const node of order) {
      const t0 = performance.now();
      await node.terminate();
      const t1 = performance.now();
      await ctx.cluster.start(node);
      await ctx.cluster.waitCaughtUp(node, CATCH_UP_TIMEOUT_MS);
      steps.push({ node: node.id, stop_ms: Math.round(t1 - t0), catch_up_ms: Math.round(performance.now() - t1) });
      ctx.log(`rolling restart: ${node.id} back after ${Math.round(performance.now() - t0)} ms`);
    }
    return { steps };
  },
  async heal(ctx) {
    await restartDown(ctx.cluster);
  },
};

export const CLOCK_SKEW = "+30s";

export const clockSkewNemesis: Nemesis = {
  name: "clock-skew",
  needsNetwork: false,
  description: "restart one node with its wall clock 30 s ahead (libfaketime); heal restarts it without",
  // Without the library the loader only warns (on stderr) and the node runs on the true clock.
  missing: (exists) => missingFile(LIBFAKETIME, "faketime", exists),
  async run(ctx) {
    const target = runningTarget(ctx);
    await target.terminate();
    await ctx.cluster.start(target, CLOCK_SKEW);
    await ctx.cluster.waitCaughtUp(target, CATCH_UP_TIMEOUT_MS);
    await sleep(ctx.faultMs);
    return { target: target.id, offset: CLOCK_SKEW };
  },
  async heal(ctx) {
    for (const node of ctx.cluster.nodes) {
      if (!node.clockOffset || !node.running) continue;
      await node.terminate();
    }
    await restartDown(ctx.cluster);
  },
};

export const JOINING_NODES = 2;

export const joinNemesis: Nemesis = {
  name: "join",
  needsNetwork: false,
  description: "two new nodes join under load (they stay for the rest of the run)",
  async run(ctx) {
    const t0 = performance.now();
    const joined: ChaosNode[] = [];
    for (let i = 0; i < JOINING_NODES; i++) joined.push(await ctx.cluster.add(`n${ctx.cluster.nodes.length + 1}`));
    await Promise.all(joined.map((n) => ctx.cluster.start(n)));
    await Promise.all(joined.map((n) => ctx.cluster.waitCaughtUp(n, CATCH_UP_TIMEOUT_MS)));
    const caughtUpMs = Math.round(performance.now() - t0);
    await sleep(Math.max(0, ctx.faultMs - caughtUpMs));
    return { joined: joined.map((n) => n.id), caught_up_ms: caughtUpMs };
  },
  async heal(ctx) {
    await restartDown(ctx.cluster);
  },
};
