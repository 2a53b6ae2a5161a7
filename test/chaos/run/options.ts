// Command-line options of `npm run chaos`, parsed and checked in one place, and the command line
// that replays a run.
import { parseArgs } from "node:util";
import { SeededRandom } from "../lib/random.js";

export interface ChaosOptions {
  seed: number;
  nodes: number;
  /** Nemesis names in the order they run. */
  nemeses: string[];
  out: string;
  faultSeconds: number;
  healSeconds: number;
  baselineSeconds: number;
  workers: number;
  rate: number;
  singleKeys: number;
  contendedKeys: number;
  /** Keys written only conditionally (If-Match on the ETag just read). */
  casKeys: number;
  /** Keys only incremented. */
  counterKeys: number;
  /** Keys read with stampede leases and written only by the lease holders' fills. */
  leaseKeys: number;
  timeoutMs: number;
  allowSkip: boolean;
  /** Run on loopback even where the lab network could be built. */
  loopback: boolean;
  /** Extra SERVICE_* settings for every node. */
  env: Record<string, string>;
  /** A node id to run under valgrind memcheck (a slow node: for finding native memory errors). */
  valgrind?: string;
}

export type Command = { kind: "run"; options: ChaosOptions } | { kind: "cleanup" } | { kind: "check"; dir: string; allowSkip: boolean } | { kind: "help" };

export const USAGE = `usage: npm run chaos -- [--seed S] [--nodes 5] [--nemesis all|kill,pause,...] [--out chaos-out/]
         [--fault-seconds 15] [--heal-seconds 10] [--baseline-seconds 10] [--workers 8] [--rate 300]
         [--single-keys 150] [--contended-keys 50] [--cas-keys 4] [--counter-keys 10]
         [--lease-keys 4]
         [--timeout-ms 15000] [--env SERVICE_X=v]...
         [--allow-skip] [--loopback] [--valgrind n1]
       npm run chaos -- --cleanup            remove namespaces and links a crashed run left
       npm run chaos -- --check chaos-out/   check a saved run again (offline)`;

function positiveInt(name: string, raw: string | undefined, fallback: number, min = 1): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`--${name} must be an integer ≥ ${min}, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * Parses argv (without node and the script). `--nemesis all` expands to every nemesis in an order
 * shuffled by the seed; an explicit list keeps its order.
 */
export function parseOptions(argv: readonly string[], known: readonly string[], randomSeed: () => number): Command {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      seed: { type: "string" },
      nodes: { type: "string" },
      nemesis: { type: "string" },
      out: { type: "string" },
      "fault-seconds": { type: "string" },
      "heal-seconds": { type: "string" },
      "baseline-seconds": { type: "string" },
      workers: { type: "string" },
      rate: { type: "string" },
      "single-keys": { type: "string" },
      "contended-keys": { type: "string" },
      "cas-keys": { type: "string" },
      "counter-keys": { type: "string" },
      "lease-keys": { type: "string" },
      "timeout-ms": { type: "string" },
      env: { type: "string", multiple: true },
      valgrind: { type: "string" },
      "allow-skip": { type: "boolean" },
      loopback: { type: "boolean" },
      cleanup: { type: "boolean" },
      check: { type: "string" },
      help: { type: "boolean" },
    },
  });
  if (values.help) return { kind: "help" };
  if (values.cleanup) return { kind: "cleanup" };
  if (values.check !== undefined) return { kind: "check", dir: values.check, allowSkip: values["allow-skip"] ?? false };
  const seed = positiveInt("seed", values.seed, randomSeed(), 0);
  const nodes = positiveInt("nodes", values.nodes, 5, 3);
  const raw = (values.nemesis ?? "all").split(",").map((s) => s.trim()).filter(Boolean);
  let nemeses: string[];
  if (raw.length === 1 && raw[0] === "all") nemeses = new SeededRandom(seed).fork("nemesis-order").shuffle(known);
  else {
    const unknown = raw.filter((n) => !known.includes(n));
    if (unknown.length > 0) throw new Error(`unknown nemesis ${unknown.join(", ")}; known: ${known.join(", ")}`);
    nemeses = raw;
  }
  const env: Record<string, string> = {};
  for (const kv of values.env ?? []) {
    const eq = kv.indexOf("=");
    if (eq <= 0 || !kv.startsWith("SERVICE_")) throw new Error(`--env expects SERVICE_NAME=value, got ${JSON.stringify(kv)}`);
    env[kv.slice(0, eq)] = kv.slice(eq + 1);
  }
  const valgrind = values.valgrind;
  if (valgrind !== undefined && !/^n[1-9]\d*$/.test(valgrind)) throw new Error(`--valgrind expects a node id such as n1, got ${JSON.stringify(valgrind)}`);
  return {
    kind: "run",
    options: {
      seed,
      nodes,
      nemeses,
      out: values.out ?? "chaos-out",
      faultSeconds: positiveInt("fault-seconds", values["fault-seconds"], 15),
      healSeconds: positiveInt("heal-seconds", values["heal-seconds"], 10, 0),
      baselineSeconds: positiveInt("baseline-seconds", values["baseline-seconds"], 10, 0),
      workers: positiveInt("workers", values.workers, 8),
      rate: positiveInt("rate", values.rate, 300),
      singleKeys: positiveInt("single-keys", values["single-keys"], 150, 0),
      contendedKeys: positiveInt("contended-keys", values["contended-keys"], 50, 0),
      casKeys: positiveInt("cas-keys", values["cas-keys"], 4, 0),
      counterKeys: positiveInt("counter-keys", values["counter-keys"], 10, 0),
      leaseKeys: positiveInt("lease-keys", values["lease-keys"], 4, 0),
      timeoutMs: positiveInt("timeout-ms", values["timeout-ms"], 15_000),
      allowSkip: values["allow-skip"] ?? false,
      loopback: values.loopback ?? false,
      env,
      ...(valgrind !== undefined ? { valgrind } : {}),
    },
  };
}

/** The command that replays a run: the same seed and every option that shapes the plan. */
export function replayCommand(o: ChaosOptions): string {
  const parts = [
    "npm run chaos --",
    `--seed ${o.seed}`,
    `--nodes ${o.nodes}`,
    `--nemesis ${o.nemeses.join(",")}`,
    `--fault-seconds ${o.faultSeconds}`,
    `--heal-seconds ${o.healSeconds}`,
    `--baseline-seconds ${o.baselineSeconds}`,
    `--workers ${o.workers}`,
    `--rate ${o.rate}`,
    `--single-keys ${o.singleKeys}`,
    `--contended-keys ${o.contendedKeys}`,
    `--cas-keys ${o.casKeys}`,
    `--counter-keys ${o.counterKeys}`,
    `--lease-keys ${o.leaseKeys}`,
    `--timeout-ms ${o.timeoutMs}`,
    ...Object.entries(o.env).map(([k, v]) => `--env ${k}=${v}`),
    ...(o.allowSkip ? ["--allow-skip"] : []),
    ...(o.loopback ? ["--loopback"] : []),
    ...(o.valgrind !== undefined ? [`--valgrind ${o.valgrind}`] : []),
    `--out ${o.out}`,
  ];
  return parts.join(" ");
}
