// One measured round: a fresh server, preloaded keys, a warm-up that is not measured, then wrk
// for the measured window with the server's CPU time read from /proc before and after. And the
// alternation of rounds between the sides of a ratio.
import { preload } from "./http.js";
import { cpuMicrosBetween, cpuTicks, type CpuTicks, type Placement } from "./proc.js";
import { metricSum, type Target } from "./servers.js";
import { runWrk } from "./wrk.js";

export interface Settings {
  readonly seconds: number;
  readonly rounds: number;
  readonly connections: number;
  /** Load before each measured window, not measured: JIT, connection set-up, first allocations. */
  readonly warmupSeconds: number;
  readonly keys: number;
  readonly valueBytes: number;
  readonly hz: number;
}

/**
 * What wrk sends for every request: a method on `/v1/cache/<prefix><n><suffix>` with a random n
 * out of the settings' key count, and optionally one more header. PUT sends a value of the
 * settings' size; other methods send no body. The `bench-` keys are preloaded with values.
 */
export interface Workload {
  /** How the rounds name it ("GET", "incr", ...). */
  readonly name: string;
  readonly method: "GET" | "PUT" | "POST";
  /** Key prefix; `bench-` (the preloaded keys) when omitted. */
  readonly prefix?: string;
  /** Appended to the key's path, such as "/incr" or "?lease=10s&wait=2s". */
  readonly suffix?: string;
  /** One more request header, as "Name: value". */
  readonly header?: string;
}

export const GET: Workload = Object.freeze({ name: "GET", method: "GET" });
export const PUT: Workload = Object.freeze({ name: "PUT", method: "PUT" });

/** One side of a comparison: how to start a fresh server and where the load generator runs. */
export interface Side {
  readonly name: string;
  start(): Promise<Target>;
  readonly generator: Placement;
  readonly token?: string;
  /** What this side's load sends, when it differs from the comparison's (incr against PUT, say). */
  readonly workload?: Workload;
}

export interface RoundResult {
  readonly side: string;
  /** The workload's name. */
  readonly method: string;
  readonly round: number;
  readonly opsPerSec: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly requests: number;
  /** CPU time (user + system) of the entry server process per completed request. */
  readonly cpuUsPerRequest: number;
  /** CPU time of every server process of the target (a cluster's nodes) per completed request. */
  readonly allCpuUsPerRequest: number;
  /**
   * CPU time of the entry server over the window's wall time. Pinned and closed loop, well below 1
   * means the server did not get its core (another process on it) or waited on something else.
   */
  readonly serverCpuShare: number;
  /** Server and load generator each on its own core. */
  readonly pinned: boolean;
  readonly generatorCpuShare: number;
  /** Non-2xx answers plus socket errors (connect, read, write, timeout). */
  readonly errors: number;
  /** dist.peer.calls of every node during the window, per completed request (clusters only). */
  readonly peerCallsPerRequest?: number;
}

const PEER_CALLS = "dist.peer.calls";

export async function measureRound(side: Side, given: Workload, round: number, s: Settings): Promise<RoundResult> {
  const workload = side.workload ?? given;
  const target = await side.start();
  try {
    await preload(target.port, s.keys, s.valueBytes, side.token);
    const load = { port: target.port, workload, keys: s.keys, valueBytes: s.valueBytes, connections: s.connections, token: side.token, placement: side.generator };
    await runWrk({ ...load, seconds: s.warmupSeconds }, s.hz);
    // Peer RPCs only exist between nodes: counted for a cluster, not for a single node.
    const counted = target.mgmtPorts.length > 1;
    const calls0 = counted ? await metricSum(target, PEER_CALLS) : 0;
    const all0 = target.pids.map(cpuTicks);
    const cpu0 = cpuTicks(target.entryPid);
    const t0 = performance.now();
    const w = await runWrk({ ...load, seconds: s.seconds }, s.hz);
    const cpu1 = cpuTicks(target.entryPid);
    const windowUs = (performance.now() - t0) * 1000;
    const all1 = target.pids.map(cpuTicks);
    const cpuUs = cpuMicrosBetween(cpu0, cpu1, s.hz);
    const allCpuUs = all0.reduce((sum, before, i) => sum + cpuMicrosBetween(before, all1[i] as CpuTicks, s.hz), 0);
    const calls1 = counted ? await metricSum(target, PEER_CALLS) : 0;
    const requests = Math.max(1, w.requests);
    return {
      side: side.name,
      method: workload.name,
      round,
      opsPerSec: w.opsPerSec,
      p50Ms: w.p50Ms,
      p99Ms: w.p99Ms,
      maxMs: w.maxMs,
      requests: w.requests,
      cpuUsPerRequest: cpuUs / requests,
      allCpuUsPerRequest: allCpuUs / requests,
      serverCpuShare: cpuUs / windowUs,
      pinned: side.generator !== "unpinned",
      generatorCpuShare: w.generatorCpuShare,
      errors: w.non2xx + w.socketErrors.connect + w.socketErrors.read + w.socketErrors.write + w.socketErrors.timeout,
      ...(counted ? { peerCallsPerRequest: (calls1 - calls0) / requests } : {}),
    };
  } finally {
    await target.stop();
  }
}

/**
 * `rounds` rounds of every side in turn (a, b, a, b, ...), so that drift in the CPU the machine
 * gives us hits every side alike. Every side sends `workload` unless it names its own. Returns
 * each side's rounds in order; `onRound` sees each result.
 */
export async function alternate(
  sides: readonly Side[],
  workload: Workload,
  s: Settings,
  onRound: (r: RoundResult) => void,
): Promise<Map<string, RoundResult[]>> {
  const out = new Map<string, RoundResult[]>(sides.map((side) => [side.name, []]));
  for (let round = 1; round <= s.rounds; round++) {
    for (const side of sides) {
      const r = await measureRound(side, workload, round, s);
      onRound(r);
      out.get(side.name)?.push(r);
    }
  }
  return out;
}
