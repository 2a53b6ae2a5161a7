// What this node answers to peers on the data path, in internal types: forwarded writes, pushed
// records (through the one apply path), reads, key pages, Merkle anti-entropy, lease requests,
// drain and health.
// peer/ adapts it to the Connect service; the in-memory transport calls it directly. Membership
// answers gossip and probe relays itself (membership/gossip-endpoint.ts).
import type { ShardedStore, VersionedRecord } from "../store/index.js";
import { BASE_MISSING, markAbstaining, type ApplyOutcome, type OwnerChecks, type PeerEndpoint, type TouchOutcome } from "../transport/index.js";
import type { MerkleAnswers } from "./anti-entropy/merkle-answers.js";
import type { KeyLister } from "./key-listing.js";
import type { Lifecycle } from "./lifecycle.js";
import { recordsForPeer } from "./read/record-answers.js";
import { describeRecords } from "./read/record-meta.js";
import type { ApplyVerdict, ReplicaApplier, TouchVerdict } from "./replica-applier.js";
import { acceptHandOff } from "./hints/hand-off-receiver.js";
import type { HintQueue } from "./hints/hint-queue.js";
import type { Clock } from "../core/clock.js";
import type { ForwardReceiver } from "./write/forward-receiver.js";
import type { Leases } from "./lease/leases.js";

export type DataEndpoint = Omit<PeerEndpoint, "gossip" | "probe">;

export interface DataEndpointDeps {
  readonly selfId: string;
  readonly store: ShardedStore;
  readonly lifecycle: Lifecycle;
  readonly applier: ReplicaApplier;
  readonly forwards: ForwardReceiver;
  readonly keys: KeyLister;
  readonly merkle: MerkleAnswers;
  /** This node's incarnation (membership), reported by health answers. */
  readonly incarnation: () => number;
  /**
   * Runs before this node hands its records to a peer (reads, key pages, Merkle answers): a node
   * resumed after a long pause drops stale data first (ContactGuard.check).
   */
  readonly beforeAnswering: () => void;
  /** The replica hint queue: hints handed off by draining peers join it. */
  readonly hints: HintQueue;
  readonly clock: Clock;
  /** The dist address membership knows for a member. */
  readonly addressOf: (id: string) => string | undefined;
  /** Answers lease requests forwarded by peers. */
  readonly leases: Leases;
  /**
   * A Get answer says, key by key, whether it counts towards the peer's quorum read: when this node
   * votes (quorum-vote.ts) and owns the key in its ring view.
   */
  readonly votes: () => boolean;
  readonly owns: (key: string) => boolean;
  /** Whether what this node applies counts as a write acknowledgement (QuorumVote.acknowledges). */
  readonly acknowledges: () => boolean;
  /** An applied record that carries an increment's result (VersionedRecord.idempotent): remember it (CounterWriter.rememberPushed). */
  readonly rememberPushed?: (rec: VersionedRecord) => void;
}

const REFUSED: ApplyOutcome = Object.freeze({ kind: "refused", version: 0, origin: "" });

/**
 * What the sender learns of a pushed record: "applied" when this node holds it now (a duplicate
 * delivery included), "stale" with the newer version it holds, or "refused".
 */
function outcomeOf(rec: { readonly version: number; readonly origin: string }, v: ApplyVerdict): ApplyOutcome {
  if (v.kind === "applied") return { kind: "applied", version: rec.version, origin: rec.origin };
  if (v.kind === "stale") return { kind: "stale", version: v.version, origin: v.origin };
  return REFUSED;
}

/** What the sender learns of a pushed touch: as outcomeOf, or "base-missing" (it pushes the full item then). */
function touchOutcomeOf(t: { readonly version: number; readonly origin: string }, v: TouchVerdict): TouchOutcome {
  return v.kind === "base-missing" ? BASE_MISSING : outcomeOf(t, v);
}

function applyAll(applier: ReplicaApplier, records: readonly VersionedRecord[], checks?: OwnerChecks): ApplyOutcome[] {
  const verdicts = applier.applyPushed(records, checks);
  return records.map((r, i) => outcomeOf(r, verdicts[i] as ApplyVerdict));
}

/**
 * Outcomes as this node's vote has them: from losing contact until it has caught up
 * (quorum-vote.ts, acknowledges), what it applied is stored but no acknowledgement.
 */
function asVoted<T extends { readonly kind: string }>(outcomes: T[], acknowledges: boolean): T[] {
  return acknowledges ? outcomes : markAbstaining(outcomes);
}

export function createDataEndpoint(deps: DataEndpointDeps): DataEndpoint {
  const { applier, merkle } = deps;
  return {
    forward: (req) => deps.forwards.handle(req),
    applySet: (_from, records: readonly VersionedRecord[], checks?: OwnerChecks) => {
      const outcomes = applyAll(applier, records.map((r) => (r.tombstone ? { ...r, tombstone: false } : r)), checks);
      const remember = deps.rememberPushed;
      if (remember !== undefined) for (let i = 0; i < records.length; i++) if (records[i]?.idempotent !== undefined && outcomes[i]?.kind === "applied") remember(records[i] as VersionedRecord);
      return asVoted(outcomes, deps.acknowledges());
    },
    applyRemove: (_from, tombstones: readonly VersionedRecord[], checks?: OwnerChecks) =>
      asVoted(applyAll(applier, tombstones.map((r) => ({ ...r, value: "", expiresAtMs: 0, tombstone: true })), checks), deps.acknowledges()),
    applyTouches: (_from, touches) => {
      const verdicts = applier.applyTouches(touches);
      return asVoted(
        touches.map((t, i) => touchOutcomeOf(t, verdicts[i] as TouchVerdict)),
        deps.acknowledges(),
      );
    },
    getRecords: (keys) => {
      deps.beforeAnswering();
      const votes = deps.votes();
      return recordsForPeer(deps.store, keys).map((record, i) => ({ record, counts: votes && deps.owns(keys[i] as string) }));
    },
    keysPage: (cursor, limit, q) => {
      deps.beforeAnswering();
      return deps.keys.page(cursor, limit, q);
    },
    inspectRecords: (keys) => {
      deps.beforeAnswering();
      return describeRecords(deps.store, deps.clock, keys);
    },
    health: () => ({ node: deps.selfId, draining: deps.lifecycle.draining, incarnation: deps.incarnation(), unixMs: deps.clock.nowMs() }),
    merkleRoot: (requester, leafCount, pulledThroughMs) => {
      deps.beforeAnswering();
      return merkle.root(requester, leafCount, pulledThroughMs);
    },
    merkleLeaves: (requester, leafCount) => {
      deps.beforeAnswering();
      return merkle.leaves(requester, leafCount);
    },
    merkleRange: (requester, leafCount, leaves, cursor) => {
      deps.beforeAnswering();
      return merkle.range(requester, leafCount, leaves, cursor);
    },
    drain: () => void deps.lifecycle.drain("peer request"),
    lease: (req) => deps.leases.answer(req),
    releaseLease: (req) => deps.leases.answerRelease(req),
    acceptHandOff: (_from, target, records) =>
      acceptHandOff(
        {
          selfId: deps.selfId,
          hints: deps.hints,
          clock: deps.clock,
          addressOf: deps.addressOf,
          applyHere: (recs) => {
            applier.applyPushed(recs);
          },
        },
        target,
        records,
      ),
  };
}
