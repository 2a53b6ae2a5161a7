// A SetRequest as the receiver takes it (pushed entries, or touches pushed without their values),
// a RemoveRequest likewise,
// and the touch half of its answer, between the wire messages and the transport types. Both
// halves of the answer share convert.ts's outcome table (toWireOutcomes / fromWireOutcome); the
// Exchange stream writes both halves with the compiled encoder (binary-encoder.ts).
import { create } from "@bufbuild/protobuf";
import { badRequest } from "../core/errors.js";
import { PEER_BATCHING } from "../core/limits.js";
import { BASE_MISSING, checkAnswerer, markAbstaining, type ApplyOutcome, type PeerEndpoint, type PeerRef, type TouchOutcome, type TouchPush } from "../transport/index.js";
import {
  type ApplyOutcome as WireOutcome,
  TouchEntrySchema,
  type HeldVersion,
  type RemoveRequest,
  type SetRequest,
  type TouchEntry,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromDeletion, fromEntry, fromWireOutcome, toNumber, toWireOutcomes } from "./convert.js";
import { fromWireOwnerChecks } from "./owner-checks.js";

/** `t` as a SetRequest.touches element. */
export function toWireTouch(t: TouchPush): TouchEntry {
  return create(TouchEntrySchema, {
    key: t.key,
    baseVersion: BigInt(t.baseVersion),
    baseOrigin: t.baseOrigin,
    version: BigInt(t.version),
    origin: t.origin,
    expiresAtUnixMs: BigInt(t.expiresAtMs),
    lastUpdatedUnixMs: BigInt(t.lastUpdatedMs),
    expectedOwners: [...t.owners],
  });
}

/** A SetRequest.touches element as a TouchPush (checked by ReplicaApplier.applyTouches, not here). */
export function fromWireTouch(e: TouchEntry): TouchPush {
  return {
    key: e.key,
    baseVersion: toNumber(e.baseVersion),
    baseOrigin: e.baseOrigin,
    version: toNumber(e.version),
    origin: e.origin,
    expiresAtMs: toNumber(e.expiresAtUnixMs),
    lastUpdatedMs: toNumber(e.lastUpdatedUnixMs),
    owners: e.expectedOwners,
  };
}

/** What a receiver did with a SetRequest: one outcome per entry, or one per touch. */
export interface SetAnswer {
  readonly outcomes: readonly ApplyOutcome[];
  readonly touches: readonly TouchOutcome[];
}

/**
 * Applies a SetRequest's entries (with their owner checks) or its touches. A request with both is
 * INVALID_ARGUMENT: each half is refused as a whole when one of its items is invalid, and a
 * request half applied before the other half failed would be neither.
 */
export function applySetRequest(endpoint: PeerEndpoint, req: SetRequest): SetAnswer {
  if (req.touches.length === 0) {
    // The owner checks first: a malformed request is refused before any value is decoded.
    const checks = fromWireOwnerChecks(req, req.entries.length);
    return { outcomes: endpoint.applySet(req.from, req.entries.map((e) => fromEntry({ ...e, tombstone: false })), checks), touches: [] };
  }
  if (req.entries.length > 0) throw badRequest(`a set request carries ${req.entries.length} entries and ${req.touches.length} touches; send them apart`);
  // Refused before converting them (the applier bounds them too, for every transport).
  if (req.touches.length > PEER_BATCHING.push.items) throw badRequest(`a push carries ${req.touches.length} touches (at most ${PEER_BATCHING.push.items})`);
  if (req.expectedOwners.length > 0 || req.ownerLists.length > 0 || req.entryOwnerLists.length > 0) throw badRequest("a set request's touches carry their own owner lists (expected_owners and owner_lists are for entries)");
  return { outcomes: [], touches: endpoint.applyTouches(req.from, req.touches.map(fromWireTouch)) };
}

/** Applies a RemoveRequest's deletions with their owner checks (checked first). */
export function applyRemoveRequest(endpoint: PeerEndpoint, req: RemoveRequest): ApplyOutcome[] {
  const checks = fromWireOwnerChecks(req, req.deletions.length);
  return endpoint.applyRemove(req.from, req.deletions.map(fromDeletion), checks);
}

/** SetResponse.touch_outcomes and touch_held for `touches`. */
export function toWireTouchAnswer(touches: readonly TouchOutcome[]): { touchOutcomes: WireOutcome[]; touchHeld: HeldVersion[] } {
  const { outcomes, held } = toWireOutcomes(touches);
  return { touchOutcomes: outcomes, touchHeld: held };
}

/**
 * The outcomes of `count` pushed touches from `to`'s answer; UNAVAILABLE when another node
 * answered. An answer without one outcome per touch (an older node ignores touches) or with an
 * outcome this node does not know reads as "base-missing": the sender pushes the full item, which
 * every node takes.
 */
export function fromWireTouchAnswer(
  answer: { readonly touchOutcomes: readonly WireOutcome[]; readonly touchHeld: readonly HeldVersion[]; readonly node: string; readonly abstains: boolean },
  count: number,
  to: PeerRef,
): TouchOutcome[] {
  checkAnswerer(answer.node, to);
  if (answer.touchOutcomes.length !== count) return new Array<TouchOutcome>(count).fill(BASE_MISSING);
  const outcomes = answer.touchOutcomes.map((o, i) => fromWireOutcome(o, answer.touchHeld[i]) ?? BASE_MISSING);
  return answer.abstains ? markAbstaining(outcomes) : outcomes;
}
