// What a nemesis is: a fault applied to real processes or to the lab network for one phase, and
// its heal. `run` applies the fault and keeps it until it is time to heal (some faults are
// sequences: a rolling restart, a flapping link); `heal` undoes whatever is left and must be safe
// to call at any moment, also when `run` failed half-way.
import { existsSync } from "node:fs";
import type { SeededRandom } from "../lib/random.js";
import type { NetworkMode } from "../net/capabilities.js";
import type { Cluster } from "../proc/cluster.js";

export interface NemesisContext {
  cluster: Cluster;
  random: SeededRandom;
  /** How long a timed fault lasts. */
  faultMs: number;
  /** First port of the slow-link proxy on the driver's address (one port per node). */
  proxyPortBase: number;
  log(message: string): void;
}

export interface Nemesis {
  readonly name: string;
  /** Needs the lab network (namespaces, nftables); skipped on loopback. */
  readonly needsNetwork: boolean;
  readonly description: string;
  /**
   * What this machine lacks for the fault (a tool, a library), or undefined when it has it all;
   * `exists` says whether a file is there (the file system by default).
   */
  missing?(exists?: (file: string) => boolean): string | undefined;
  run(ctx: NemesisContext): Promise<Record<string, unknown>>;
  heal(ctx: NemesisContext): Promise<void>;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** How long a restarted or joining node may take to catch up before the run gives up. */
export const CATCH_UP_TIMEOUT_MS = 60_000;

/**
 * Why a phase's nemesis cannot run here, or undefined when it can. A skipped phase fails the
 * "no skipped nemesis" gate (unless --allow-skip): a fault that silently did nothing would pass
 * every other gate without having tested anything.
 */
export function skipReason(nemesis: Nemesis, network: NetworkMode): string | undefined {
  if (nemesis.needsNetwork && network.mode === "loopback") return network.reason;
  return nemesis.missing?.();
}

/** "<file> is missing (apt-get install <pkg>)" when the file is not there. */
export function missingFile(file: string, debianPackage: string, exists: (f: string) => boolean = existsSync): string | undefined {
  return exists(file) ? undefined : `${file} is missing (apt-get install ${debianPackage})`;
}
