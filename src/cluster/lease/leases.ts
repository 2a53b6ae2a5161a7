// Where a lease read's miss is decided: the key's primary holds the key's lease
// (lease-table.ts). A node that is not the primary forwards the request once (Lease, and a
// holder's ReleaseLease); the receiver answers only as the key's primary in its own ring view
// and otherwise "none" (a release: not released), so waits never chain. No lease at all
// ("none": the primary is unreachable or at its lease cap, or the ring moved) becomes a plain
// miss for the client: a lease saves load, it is never needed to read or write.
import { CacheError, toCacheError } from "../../core/errors.js";
import { quotedKey } from "../../core/key-check.js";
import type { Logger } from "../../log/index.js";
import type { LeaseOutcome, LeaseRelease, LeaseRequest, PeerTransport } from "../../transport/index.js";
import type { ClusterView } from "../cluster-view.js";
import { checkLeaseRelease, checkLeaseRequest } from "../peer-input.js";
import type { LeaseTable } from "./lease-table.js";

export interface LeasesDeps {
  readonly selfId: string;
  readonly view: ClusterView;
  readonly transport: PeerTransport;
  readonly table: LeaseTable;
  readonly logger: Logger;
}

const NONE: LeaseOutcome = Object.freeze({ kind: "none" });

export class Leases {
  constructor(private readonly deps: LeasesDeps) {}

  /** A client's lease read of `key` missed on this node: the key's primary decides (this node, or one forward). */
  async ask(key: string, leaseMs: number, waitMs: number): Promise<LeaseOutcome> {
    const { selfId, view } = this.deps;
    const primary = view.ring().ownersOf(key).primary;
    if (primary === selfId) return this.deps.table.acquire(key, leaseMs, waitMs);
    // A suspect primary is asked too (suspicion is often a slow probe, refuted soon): a primary
    // that is really gone costs the call its timeout at most, the wait plus the peer timeout.
    const peer = view.peer(primary);
    if (peer === undefined) return NONE;
    try {
      return await this.deps.transport.lease(peer, { from: selfId, key, leaseMs, waitMs });
    } catch (err) {
      this.deps.logger.debug("lease request to the primary failed: a plain miss", { key: key.slice(0, 256), primary, error: toCacheError(err).message });
      return NONE;
    }
  }

  /**
   * A lease holder releases the lease `token` names on `key` (its load failed): the key's primary
   * ends it (this node, or one forward). False when no lease of that token is held there. A
   * primary that cannot be asked is UNAVAILABLE: the lease then ends when its time runs out.
   */
  async release(key: string, token: string): Promise<boolean> {
    const { selfId, view } = this.deps;
    const primary = view.ring().ownersOf(key).primary;
    if (primary === selfId) return this.deps.table.release(key, token);
    const unasked = (why: string) =>
      new CacheError("UNAVAILABLE", `the primary of key ${quotedKey(key)} (${primary}) could not be asked to release its lease (${why}); the lease ends when its time runs out`);
    const peer = view.peer(primary);
    if (peer === undefined) throw unasked("no address is known for it");
    try {
      return await this.deps.transport.releaseLease(peer, { from: selfId, key, token });
    } catch (err) {
      throw unasked(toCacheError(err).message);
    }
  }

  /** A lease release a peer forwarded: answered as the key's primary only, never forwarded again. */
  answerRelease(req: LeaseRelease): boolean {
    checkLeaseRelease(req);
    if (this.deps.view.ring().ownersOf(req.key).primary !== this.deps.selfId) return false;
    return this.deps.table.release(req.key, req.token);
  }

  /** A lease request a peer forwarded: answered as the key's primary only, never forwarded again. */
  answer(req: LeaseRequest): LeaseOutcome | Promise<LeaseOutcome> {
    checkLeaseRequest(req);
    if (this.deps.view.ring().ownersOf(req.key).primary !== this.deps.selfId) return NONE;
    return this.deps.table.acquire(req.key, req.leaseMs, req.waitMs);
  }
}
