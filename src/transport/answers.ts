// What a peer's answer says of who answered and whether its acknowledgements count, read the same
// way by the wire client (peer/), the in-process transport and membership.
import { CacheError } from "../core/errors.js";
import type { PeerRef } from "./types.js";

/**
 * The id of the node that answered for `memberId`, when it is another node: an advertised address
 * that points to another node (or to the caller itself), a seed given with the wrong id, a reused
 * address. Older nodes do not say who answered ("").
 */
export function answeredAsOther(node: string, memberId: string): string | undefined {
  return node !== "" && node !== memberId ? node : undefined;
}

/** An answer counts only from the node that was addressed: from another node the call failed. */
export function checkAnswerer(node: string, to: PeerRef): void {
  const other = answeredAsOther(node, to.id);
  if (other !== undefined) throw new CacheError("UNAVAILABLE", `${to.address} answered as node ${other}, not ${to.id}`);
}

/**
 * The outcomes of a receiver that lost contact and has not caught up (QuorumVote.acknowledges):
 * what it applied is stored but no acknowledgement (ApplyOutcome.abstains).
 */
export function markAbstaining<T extends { readonly kind: string }>(outcomes: T[]): T[] {
  return outcomes.map((o) => (o.kind === "applied" ? { ...o, abstains: true } : o));
}

/** Whether any of `outcomes` abstains: what SetResponse.abstains and RemoveResponse.abstains say. */
export function anyAbstains(outcomes: ReadonlyArray<{ readonly kind: string; readonly abstains?: boolean }>): boolean {
  return outcomes.some((o) => o.abstains === true);
}
