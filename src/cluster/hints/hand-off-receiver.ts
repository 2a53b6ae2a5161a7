// The receiving side of a hint hand-off: a draining peer could not deliver these hints (their
// target is unreachable) and gives them to this node, a live owner of the keys. They join this
// node's own hint queue for the target and are replayed from here like any hint, under the
// same caps and TTL (the TTL counts from their arrival here).
import type { Clock } from "../../core/clock.js";
import { badRequest } from "../../core/errors.js";
import { isNodeId } from "../../core/node-id.js";
import type { VersionedRecord } from "../../store/index.js";
import type { PeerRef } from "../../transport/index.js";
import { checkPeerRecord } from "../peer-input.js";
import type { HintQueue } from "./hint-queue.js";

export interface HandOffReceiverDeps {
  readonly selfId: string;
  readonly hints: HintQueue;
  readonly clock: Clock;
  /** The dist address membership knows for a member, when it knows it. */
  readonly addressOf: (id: string) => string | undefined;
  /** Applies records addressed to this node itself (the one apply path for pushed records). */
  readonly applyHere: (records: readonly VersionedRecord[]) => void;
}

/**
 * Queues `records` for `target`; one flag per record (false: a cap dropped it). The whole call is
 * refused with BAD_REQUEST when the target is not a node id, not a member this node knows, or a
 * record fails the checks every pushed record gets. Hints addressed to this node are applied
 * here at once.
 */
export function acceptHandOff(deps: HandOffReceiverDeps, target: PeerRef, records: readonly VersionedRecord[]): boolean[] {
  if (!isNodeId(target.id)) throw badRequest(`hand-off target ${JSON.stringify(target.id.slice(0, 64))} is not a node id`);
  const now = deps.clock.nowMs();
  for (const rec of records) checkPeerRecord(rec, now);
  if (target.id === deps.selfId) {
    deps.applyHere(records);
    return records.map(() => true);
  }
  // Only a member this node knows, at the address it knows: taking the sender's address let one
  // peer have this node replay, with its own credential, to any host it named, and queue hints
  // for any number of made-up targets.
  const address = deps.addressOf(target.id);
  if (address === undefined) throw badRequest(`hand-off target ${target.id} is not a member this node knows`);
  const peer = { id: target.id, address };
  return records.map((rec) => deps.hints.add(peer, rec));
}
