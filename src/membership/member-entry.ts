// One entry of the member table, its frozen public form, and the fields that ride along with
// gossip claims (the advertised URLs and the draining flag): which claim may set them is decided
// here (pure apart from updating the entry).
import { parseBaseUrl } from "../core/base-url.js";
import type { Member, MemberState } from "./transitions.js";

/** A member as the table holds it. */
export interface Entry {
  id: string;
  address: string;
  state: MemberState;
  incarnation: number;
  lastSeenMs: number;
  /** Last successful probe (or join), for the dead window. */
  lastProbeOkMs: number;
  /** Advertised base URLs ("" while not known). */
  apiUrl: string;
  mgmtUrl: string;
  /** Draining: no ring position (the member hands its data off before it stops). */
  draining: boolean;
}

/** The public, frozen form of an entry (`draining` only when set). */
export function freeze(e: Entry): Member {
  const m: Member = { id: e.id, address: e.address, state: e.state, incarnation: e.incarnation, lastSeenMs: e.lastSeenMs, apiUrl: e.apiUrl, mgmtUrl: e.mgmtUrl };
  return Object.freeze(e.draining ? { ...m, draining: true } : m);
}

/**
 * Hands out each entry's frozen form, and the same object again while the entry still matches it
 * field for field (compared, not invalidated, so no update can leave it stale): the write path
 * asks for its peers on every write.
 */
export class FrozenForms {
  private readonly last = new Map<string, Member>();

  of(e: Entry): Member {
    const m = this.last.get(e.id);
    if (m !== undefined && isFrozenFormOf(m, e)) return m;
    const fresh = freeze(e);
    this.last.set(e.id, fresh);
    return fresh;
  }

  forget(id: string): void {
    this.last.delete(id);
  }
}

function isFrozenFormOf(m: Member, e: Entry): boolean {
  return (
    m.id === e.id &&
    m.address === e.address &&
    m.state === e.state &&
    m.incarnation === e.incarnation &&
    m.lastSeenMs === e.lastSeenMs &&
    m.apiUrl === e.apiUrl &&
    m.mgmtUrl === e.mgmtUrl &&
    (m.draining === true) === e.draining
  );
}

/** The mutable claim fields of a member entry. */
export interface ClaimFields {
  apiUrl: string;
  mgmtUrl: string;
  draining: boolean;
}

/**
 * Takes the fields of a claim the table accepted into `e`; returns true when one changed.
 * URLs: always from the member's own claim, from hearsay only when it is newer (higher
 * incarnation) or fills in a URL not known yet; a URL that is not a valid http(s) base URL is
 * ignored. Draining: from the member's own claim at or above the known incarnation, or from
 * hearsay strictly above it (a node bumps its incarnation when it starts draining, and a restart
 * clears the flag by refuting the old claim with a higher incarnation).
 */
export function adoptClaimFields(e: ClaimFields, claim: Member, ownClaim: boolean, knownIncarnation: number): boolean {
  const trusted = ownClaim || claim.incarnation > knownIncarnation;
  const api = claim.apiUrl ? parseBaseUrl(claim.apiUrl) : undefined;
  const mgmt = claim.mgmtUrl ? parseBaseUrl(claim.mgmtUrl) : undefined;
  let changed = false;
  if (api !== undefined && api !== e.apiUrl && (trusted || e.apiUrl === "")) {
    e.apiUrl = api;
    changed = true;
  }
  if (mgmt !== undefined && mgmt !== e.mgmtUrl && (trusted || e.mgmtUrl === "")) {
    e.mgmtUrl = mgmt;
    changed = true;
  }
  const draining = claim.draining === true;
  const drainingTrusted = ownClaim ? claim.incarnation >= knownIncarnation : claim.incarnation > knownIncarnation;
  if (draining !== e.draining && drainingTrusted) {
    e.draining = draining;
    changed = true;
  }
  return changed;
}

/** How many of `entries` are alive, suspect, and not dead. */
export function countStates(entries: Iterable<Entry>): { alive: number; suspect: number; notDead: number } {
  let alive = 0;
  let suspect = 0;
  for (const e of entries) {
    if (e.state === "alive") alive++;
    else if (e.state === "suspect") suspect++;
  }
  return { alive, suspect, notDead: alive + suspect };
}
