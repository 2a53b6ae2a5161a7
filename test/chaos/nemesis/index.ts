// Every nemesis by name, in the order `--nemesis all` runs them before the seeded shuffle.
import { bridgeNemesis, createSlowLinkNemesis, cutLinkNemesis, flapNemesis, isolateNemesis, splitNemesis } from "./network-faults.js";
import type { Nemesis } from "./nemesis.js";
import { clockSkewNemesis, joinNemesis, killNemesis, pauseNemesis, rollingRestartNemesis } from "./process-faults.js";

export function createNemeses(): Map<string, Nemesis> {
  const all: Nemesis[] = [
    killNemesis,
    pauseNemesis,
    rollingRestartNemesis,
    joinNemesis,
    isolateNemesis,
    splitNemesis,
    bridgeNemesis,
    cutLinkNemesis,
    flapNemesis,
    createSlowLinkNemesis(),
    clockSkewNemesis,
  ];
  return new Map(all.map((n) => [n.name, n]));
}

export const NEMESIS_NAMES = [...createNemeses().keys()];
