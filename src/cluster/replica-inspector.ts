// Each owner's copy of one key, for operators (GET /cluster/keys/{key}/replicas): the local
// record read in place, every other owner asked with one Inspect call, all in parallel. An owner
// that does not answer within the timeout, or fails, is reported as unreachable; the work is
// bounded by the replication factor and the timeout.
import type { Clock, Timers } from "../core/clock.js";
import { withTimeout } from "../core/timeout.js";
import type { PeerTransport, RecordMeta } from "../transport/index.js";
import type { ClusterView } from "./cluster-view.js";
import { recordMeta, type RecordHeaders } from "./read/record-meta.js";

/** One owner's copy of the key, or why it could not be read. */
export type ReplicaCopy =
  | { readonly node: string; readonly role: "primary" | "replica"; readonly reachable: true; readonly meta: RecordMeta }
  | { readonly node: string; readonly role: "primary" | "replica"; readonly reachable: false; readonly error: string };

export interface ReplicaReport {
  /** Owner ids in this node's ring, primary first. */
  readonly owners: readonly string[];
  /** One copy per owner, in owner order. */
  readonly copies: readonly ReplicaCopy[];
  /** True when reachable owners hold different records (state, version or origin). */
  readonly divergent: boolean;
}

export interface ReplicaInspectorDeps {
  readonly selfId: string;
  readonly view: ClusterView;
  readonly store: RecordHeaders;
  readonly transport: PeerTransport;
  readonly clock: Clock;
  readonly timers: Timers;
  /** How long each owner may take to answer (REPLICA_INSPECT_TIMEOUT_MS). */
  readonly timeoutMs: number;
}

/** True when the reachable copies do not all hold the same record. */
export function copiesDiverge(copies: readonly ReplicaCopy[]): boolean {
  const seen = new Set<string>();
  for (const c of copies) if (c.reachable) seen.add(`${c.meta.state}\u0000${c.meta.version}\u0000${c.meta.origin}`);
  return seen.size > 1;
}

export class ReplicaInspector {
  constructor(private readonly deps: ReplicaInspectorDeps) {}

  /** How long each owner may take to answer, ms. */
  get timeoutMs(): number {
    return this.deps.timeoutMs;
  }

  async inspect(key: string): Promise<ReplicaReport> {
    const owners = this.deps.view.ring().ownersOf(key).ids;
    const copies = await Promise.all(owners.map((id, i) => this.copyAt(id, i === 0 ? "primary" : "replica", key)));
    return { owners, copies, divergent: copiesDiverge(copies) };
  }

  private async copyAt(node: string, role: "primary" | "replica", key: string): Promise<ReplicaCopy> {
    const { selfId, view, store, clock } = this.deps;
    if (node === selfId) return { node, role, reachable: true, meta: recordMeta(key, store.peekHeader(key), clock.nowMs()) };
    const peer = view.peer(node);
    if (peer === undefined) return { node, role, reachable: false, error: "not a member of this node's view" };
    try {
      const [meta] = await withTimeout(this.deps.timers, this.deps.timeoutMs, this.deps.transport.inspect(peer, [key], this.deps.timeoutMs), `inspect of ${node}`);
      if (meta === undefined) return { node, role, reachable: false, error: "the owner described no record" };
      return { node, role, reachable: true, meta };
    } catch (err) {
      return { node, role, reachable: false, error: err instanceof Error ? err.message : String(err) };
    }
  }
}
