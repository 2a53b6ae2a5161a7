// nftables rulesets the harness loads inside a node's namespace, as text for `nft -f -`. Each is one
// atomic transaction that replaces the table it owns; heal deletes the table. Pure, so the rules
// are unit-tested without root.
//
// Every address must lie in the harness network (198.18.0.0/24, never routed): a rule can never
// touch anything else.
import { assertLabAddress } from "./addresses.js";

/** The table of partition rules (drop to and from the listed peers). */
export const CUT_TABLE = "hcchaos_cut";
/** The table of slow-link rules (peer traffic redirected through the delaying proxy). */
export const SLOW_TABLE = "hcchaos_slow";

function replaceTable(family: string, name: string, body: string): string {
  // "add" then "delete" makes the delete succeed whether or not the table existed; all of it is
  // one transaction, so the node never sees a moment without rules or with both sets.
  return `add table ${family} ${name}\ndelete table ${family} ${name}\ntable ${family} ${name} {\n${body}}\n`;
}

/**
 * Drops every packet from or to `peers` (all ports, both directions), as a real partition does:
 * no reset, so connections time out.
 */
export function cutRuleset(peers: readonly string[]): string {
  if (peers.length === 0) throw new Error("a cut needs at least one peer");
  for (const p of peers) assertLabAddress(p);
  const set = `{ ${peers.join(", ")} }`;
  return replaceTable(
    "inet",
    CUT_TABLE,
    `  chain input {\n    type filter hook input priority 0; policy accept;\n    ip saddr ${set} drop\n  }\n` +
      `  chain output {\n    type filter hook output priority 0; policy accept;\n    ip daddr ${set} drop\n  }\n`,
  );
}

/** One peer's dist listener and the proxy port that stands in for it. */
export interface Redirect {
  address: string;
  port: number;
  proxyAddress: string;
  proxyPort: number;
}

/**
 * Sends new connections to the listed peer listeners through the proxy (DNAT on output) and resets
 * connections opened before (their packets still carry the real destination after the NAT hook),
 * so every link of this node to those peers goes through the proxy from now on.
 */
export function slowRuleset(redirects: readonly Redirect[]): string {
  if (redirects.length === 0) throw new Error("a slow link needs at least one redirect");
  const nat: string[] = [];
  const reset: string[] = [];
  for (const r of redirects) {
    assertLabAddress(r.address);
    assertLabAddress(r.proxyAddress);
    nat.push(`    ip daddr ${r.address} tcp dport ${r.port} dnat to ${r.proxyAddress}:${r.proxyPort}`);
    reset.push(`    ip daddr ${r.address} tcp dport ${r.port} reject with tcp reset`);
  }
  return replaceTable(
    "ip",
    SLOW_TABLE,
    `  chain nat_output {\n    type nat hook output priority -100; policy accept;\n${nat.join("\n")}\n  }\n` +
      `  chain reset_output {\n    type filter hook output priority 0; policy accept;\n${reset.join("\n")}\n  }\n`,
  );
}

/** The command text that removes a table (heal); loading it when the table is absent is harmless. */
export function deleteTable(family: "inet" | "ip", name: string): string {
  return `add table ${family} ${name}\ndelete table ${family} ${name}\n`;
}
