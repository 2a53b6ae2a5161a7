// Decides whether the harness can build its own network (namespaces, veths, nftables): it needs
// CAP_NET_ADMIN and CAP_SYS_ADMIN (ip netns), and the ip and nft commands. Otherwise nodes run on
// loopback and the network nemeses report SKIPPED with the reason.
import { readFileSync } from "node:fs";
import type { CommandRunner } from "./commands.js";

const CAP_NET_ADMIN = 12n;
const CAP_SYS_ADMIN = 21n;

export type NetworkMode = { mode: "netns" } | { mode: "loopback"; reason: string };

/** Parses the effective capability mask out of /proc/self/status text. */
export function effectiveCapabilities(statusText: string): bigint {
  const line = statusText.split("\n").find((l) => l.startsWith("CapEff:"));
  if (!line) return 0n;
  return BigInt(`0x${line.slice("CapEff:".length).trim()}`);
}

export function hasCapability(mask: bigint, bit: bigint): boolean {
  return ((mask >> bit) & 1n) === 1n;
}

export async function detectNetworkMode(run: CommandRunner, statusText = readFileSync("/proc/self/status", "utf8")): Promise<NetworkMode> {
  const caps = effectiveCapabilities(statusText);
  if (!hasCapability(caps, CAP_NET_ADMIN)) return { mode: "loopback", reason: "no CAP_NET_ADMIN (network namespaces and nftables need it)" };
  if (!hasCapability(caps, CAP_SYS_ADMIN)) return { mode: "loopback", reason: "no CAP_SYS_ADMIN (ip netns needs it)" };
  for (const [cmd, args, pkg] of [
    ["ip", ["-V"], "iproute2"],
    ["nft", ["--version"], "nftables"],
  ] as const) {
    try {
      await run(cmd, args);
    } catch {
      return { mode: "loopback", reason: `${cmd} is not installed (Debian package ${pkg})` };
    }
  }
  return { mode: "netns" };
}
