// Pure membership decisions (SWIM with incarnation numbers). The MemberTable holds the state
// and applies what these functions decide; tests drive them with tables.

export type MemberState = "alive" | "suspect" | "dead";

/** One member as a node sees it. */
export interface Member {
  readonly id: string;
  /** Dist address, host:port. */
  readonly address: string;
  readonly state: MemberState;
  readonly incarnation: number;
  /** Last time this node heard from or about the member, Unix ms. */
  readonly lastSeenMs: number;
  /** Advertised client and management base URLs; empty or absent while not known. */
  readonly apiUrl?: string;
  readonly mgmtUrl?: string;
  /** The member is draining: it holds no ring position. Absent means false. */
  readonly draining?: boolean;
  /** The member left for good (only in its own last claim). Absent means false. */
  readonly left?: boolean;
}

/** What to do with one gossiped entry. */
export type GossipDecision =
  | { readonly kind: "ignore" }
  /** Same state: only refresh last-seen and take a higher incarnation. */
  | { readonly kind: "refresh"; readonly incarnation: number }
  | { readonly kind: "add"; readonly state: MemberState; readonly incarnation: number; readonly address: string }
  | { readonly kind: "change"; readonly state: MemberState; readonly incarnation: number; readonly address: string }
  /** A claim that the local node is suspect or dead: take an incarnation above it. */
  | { readonly kind: "refute"; readonly incarnation: number };

/**
 * Decides one gossip entry `claim`, sent by node `from`, against the local view `local`
 * (undefined when unknown). `pruned` tells whether the member was pruned as dead earlier.
 *
 * Rules: a claim about the local node that it is suspect or dead, or that contradicts its draining
 * state (`selfDraining`) or says it left, at an incarnation at or above its own is refuted with a
 * strictly higher incarnation (so a restarted node is not taken for its draining predecessor). A node's own claim about itself is
 * accepted (that is how a restarted or pruned node rejoins). Third-party claims never add a
 * dead member nor resurrect a pruned one; a third-party "dead" is taken as "suspect" so that
 * local probes, not hearsay, decide a death. Otherwise the higher incarnation wins, and at
 * equal incarnations suspicion overrides alive.
 */
export function decideGossip(
  selfId: string,
  selfIncarnation: number,
  from: string,
  claim: Member,
  local: Member | undefined,
  pruned: boolean,
  selfDraining = false,
): GossipDecision {
  if (!Number.isSafeInteger(claim.incarnation) || claim.incarnation < 0 || claim.incarnation >= Number.MAX_SAFE_INTEGER) return { kind: "ignore" };
  if (claim.id === selfId) {
    const wrong = claim.state !== "alive" || (claim.draining ?? false) !== selfDraining || claim.left === true;
    if (wrong && claim.incarnation >= selfIncarnation) return { kind: "refute", incarnation: claim.incarnation + 1 };
    return { kind: "ignore" };
  }
  const ownClaim = from === claim.id;
  if (ownClaim) {
    const incarnation = Math.max(claim.incarnation, local?.incarnation ?? 0);
    if (!local) return { kind: "add", state: "alive", incarnation, address: claim.address };
    if (local.state !== "alive") return { kind: "change", state: "alive", incarnation, address: claim.address };
    return { kind: "refresh", incarnation };
  }
  const state: MemberState = claim.state === "dead" ? "suspect" : claim.state;
  if (!local) {
    if (pruned || claim.state === "dead") return { kind: "ignore" };
    return { kind: "add", state, incarnation: claim.incarnation, address: claim.address };
  }
  if (claim.incarnation < local.incarnation) return { kind: "ignore" };
  if (claim.incarnation === local.incarnation) {
    if (local.state === "alive" && state === "suspect") return { kind: "change", state, incarnation: claim.incarnation, address: local.address };
    return { kind: "ignore" };
  }
  if (state !== local.state) return { kind: "change", state, incarnation: claim.incarnation, address: local.address };
  return { kind: "refresh", incarnation: claim.incarnation };
}

/** True when a suspect member has gone `deadAfterMs` without a successful probe. */
export function isDeadBy(lastProbeOkMs: number, nowMs: number, deadAfterMs: number): boolean {
  return nowMs - lastProbeOkMs >= deadAfterMs;
}
