// What one run of a campaign is: its kind (chaos, fuzz or soak, in the order given, round and
// round), its seed (the campaign's base seed plus the run's index, so no two runs repeat one
// another and every run replays on its own), the command that runs it, the folder it writes, how
// long it may take, and the command a person types to replay it.
import path from "node:path";

export const RUN_KINDS = ["chaos", "fuzz", "soak"] as const;
export type RunKind = (typeof RUN_KINDS)[number];

export interface CampaignOptions {
  /** The kinds of run, taken in this order, round and round. */
  kinds: readonly RunKind[];
  /** The first run's seed; run i uses baseSeed + i. */
  baseSeed: number;
  out: string;
  /** Stop after this many runs (undefined: no limit). */
  runs: number | undefined;
  /** Start no run after this long (ms, undefined: no limit). */
  durationMs: number | undefined;
  stopOnFailure: boolean;
  build: boolean;
  chaosNodes: number;
  fuzzCases: number;
  soakSeconds: number;
}

export interface RunPlan {
  index: number;
  kind: RunKind;
  seed: number;
  /** The run's folder (created by the campaign; chaos and soak write their reports there). */
  dir: string;
  /** The script and its arguments, run as `node --import tsx/esm <argv>` from the repository root. */
  argv: string[];
  /** Past this the run is stopped and counts as failed (a hang is a failure). */
  timeoutMs: number;
  replay: string;
}

const MINUTE_MS = 60_000;

/** The run at `index` (0-based). */
export function planRun(index: number, o: CampaignOptions): RunPlan {
  const kind = o.kinds[index % o.kinds.length] as RunKind;
  const seed = o.baseSeed + index;
  const dir = path.join(o.out, `${String(index + 1).padStart(4, "0")}-${kind}-${seed}`);
  const args = argsFor(kind, seed, o);
  return {
    index,
    kind,
    seed,
    dir,
    argv: [`test/${kind}/main.ts`, ...args, ...(kind === "fuzz" ? [] : ["--out", dir])],
    timeoutMs: timeoutFor(kind, o),
    replay: `npm run ${kind} -- ${args.join(" ")}`,
  };
}

function argsFor(kind: RunKind, seed: number, o: CampaignOptions): string[] {
  switch (kind) {
    case "chaos":
      return ["--seed", String(seed), "--nodes", String(o.chaosNodes), "--nemesis", "all"];
    case "fuzz":
      return ["--cases", String(o.fuzzCases), "--seed", String(seed)];
    case "soak":
      return ["--seconds", String(o.soakSeconds), "--seed", String(seed)];
  }
}

/**
 * Generous bounds, well past what a healthy run takes on 2 cores (test/chaos/README.md): the full
 * chaos matrix about 5 minutes; fuzz about a minute per 20,000 cases; a soak its length plus its
 * preload and report.
 */
function timeoutFor(kind: RunKind, o: CampaignOptions): number {
  switch (kind) {
    case "chaos":
      return 30 * MINUTE_MS;
    case "fuzz":
      return 15 * MINUTE_MS + Math.ceil(o.fuzzCases / 20_000) * 5 * MINUTE_MS;
    case "soak":
      return o.soakSeconds * 1_000 + 15 * MINUTE_MS;
  }
}
