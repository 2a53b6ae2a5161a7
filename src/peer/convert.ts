// Conversions between the wire messages of gen/proto and the internal types of transport/.
// The wire types stay separate from internal ones so the protocol does not drift when
// internals change. 64-bit integers become JS numbers (every value the service produces is
// below 2^53).
import { create } from "@bufbuild/protobuf";
import { fromBytes, toBuffer } from "../core/byte-string.js";
import type { ConsistencyLevel } from "../config/index.js";
import type { VersionedRecord } from "../store/index.js";
import { badRequest, CacheError } from "../core/errors.js";
import { checkAnswerer, markAbstaining } from "../transport/index.js";
import type { ApplyOutcome, ClientWrite, HeldRecord, LeaseOutcome, TouchOutcome, WriteCondition, PeerMember, PeerMemberState, PeerRef, RecordMeta, WriteOutcome } from "../transport/index.js";
import {
  ApplyOutcome as WireOutcome,
  HeldVersionSchema,
  type HeldVersion,
  ClientWriteSchema,
  Consistency,
  PreconditionSchema,
  type Precondition,
  DeletionSchema,
  EntrySchema,
  GetResponseSchema,
  GetResultSchema,
  type GetResponse,
  LeaseOutcome as WireLeaseOutcome,
  LeaseResponseSchema,
  type LeaseResponse,
  MemberSchema,
  MemberState,
  RecordInfoSchema,
  RecordState,
  type RecordInfo,
  WriteKind,
  WriteResultSchema,
  type ClientWrite as WireClientWrite,
  type Deletion,
  type Entry,
  type Member,
  type WriteResult as WireWriteResult,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { quotedKey } from "../core/key-check.js";

export function toNumber(v: bigint): number {
  return Number(v);
}

export function toEntry(rec: VersionedRecord): Entry {
  return create(EntrySchema, {
    key: rec.key,
    value: rec.tombstone ? new Uint8Array(0) : toBuffer(rec.value),
    version: BigInt(rec.version),
    origin: rec.origin,
    expiresAtUnixMs: BigInt(rec.expiresAtMs),
    lastUpdatedUnixMs: BigInt(rec.lastUpdatedMs),
    tombstone: rec.tombstone,
    ...(rec.idempotent === undefined
      ? {}
      : { idempotent: { idempotencyKey: rec.idempotent.idemKey, fingerprint: rec.idempotent.fingerprint, value: BigInt(rec.idempotent.value), appliedBy: rec.idempotent.appliedBy } }),
  });
}

export function fromEntry(e: Entry): VersionedRecord {
  return {
    key: e.key,
    value: e.tombstone ? "" : fromBytes(e.value),
    version: toNumber(e.version),
    origin: e.origin,
    lastUpdatedMs: toNumber(e.lastUpdatedUnixMs),
    expiresAtMs: e.tombstone ? 0 : toNumber(e.expiresAtUnixMs),
    tombstone: e.tombstone,
    ...(e.idempotent === undefined || e.idempotent.idempotencyKey === ""
      ? {}
      : { idempotent: { idemKey: e.idempotent.idempotencyKey, fingerprint: e.idempotent.fingerprint, value: toNumber(e.idempotent.value), appliedBy: e.idempotent.appliedBy } }),
  };
}

const RECORD_STATE_TO_WIRE: Readonly<Record<RecordMeta["state"], RecordState>> = Object.freeze({ absent: RecordState.ABSENT, live: RecordState.LIVE, tombstone: RecordState.TOMBSTONE });

export function toRecordInfo(m: RecordMeta): RecordInfo {
  return create(RecordInfoSchema, {
    key: m.key,
    state: RECORD_STATE_TO_WIRE[m.state],
    version: BigInt(m.version),
    origin: m.origin,
    expiresAtUnixMs: BigInt(m.expiresAtMs),
    lastUpdatedUnixMs: BigInt(m.lastUpdatedMs),
    valueBytes: BigInt(m.valueBytes),
  });
}

/** A wire record description; an unknown state (a newer peer) is UNAVAILABLE rather than a guess. */
export function fromRecordInfo(r: RecordInfo): RecordMeta {
  const state = r.state === RecordState.ABSENT ? "absent" : r.state === RecordState.LIVE ? "live" : r.state === RecordState.TOMBSTONE ? "tombstone" : undefined;
  if (state === undefined) throw new CacheError("UNAVAILABLE", `peer described ${quotedKey(r.key)} with an unknown record state ${r.state}`);
  return {
    key: r.key,
    state,
    version: toNumber(r.version),
    origin: r.origin,
    expiresAtMs: toNumber(r.expiresAtUnixMs),
    lastUpdatedMs: toNumber(r.lastUpdatedUnixMs),
    valueBytes: toNumber(r.valueBytes),
  };
}

export function toDeletion(rec: VersionedRecord): Deletion {
  return create(DeletionSchema, { key: rec.key, version: BigInt(rec.version), origin: rec.origin, deletedAtUnixMs: BigInt(rec.lastUpdatedMs) });
}

export function fromDeletion(d: Deletion): VersionedRecord {
  return { key: d.key, value: "", version: toNumber(d.version), origin: d.origin, lastUpdatedMs: toNumber(d.deletedAtUnixMs), expiresAtMs: 0, tombstone: true };
}

/** ApplyOutcome enum numbers by outcome (entries and touches). */
export const OUTCOME_TO_WIRE: Readonly<Record<TouchOutcome["kind"], WireOutcome>> = Object.freeze({
  applied: WireOutcome.APPLIED,
  stale: WireOutcome.STALE,
  refused: WireOutcome.REFUSED,
  "base-missing": WireOutcome.BASE_MISSING,
});

const WIRE_TO_OUTCOME: ReadonlyMap<WireOutcome, TouchOutcome["kind"]> = new Map(Object.entries(OUTCOME_TO_WIRE).map(([kind, wire]) => [wire, kind as TouchOutcome["kind"]]));

/**
 * Outcomes and what the receiver holds, one each per pushed item, as Set and Remove answers carry
 * them for entries (outcomes, held) and touches (touch_outcomes, touch_held).
 */
export function toWireOutcomes(outcomes: readonly TouchOutcome[]): { outcomes: WireOutcome[]; held: HeldVersion[] } {
  return {
    outcomes: outcomes.map((o) => OUTCOME_TO_WIRE[o.kind]),
    // Plain objects as create() gives them (both fields set), without its reflection: one per pushed item.
    held: outcomes.map((o): HeldVersion => ({ $typeName: HeldVersionSchema.typeName, version: BigInt(o.version), origin: o.origin })),
  };
}

/** One pushed item's outcome with what the receiver holds; undefined for an outcome this node does not know. */
export function fromWireOutcome(o: WireOutcome, held: HeldVersion | undefined): TouchOutcome | undefined {
  const kind = WIRE_TO_OUTCOME.get(o);
  return kind === undefined ? undefined : ({ kind, version: held ? toNumber(held.version) : 0, origin: held?.origin ?? "" } as TouchOutcome);
}

/** The fields of a Set or Remove answer: one outcome and held version per record, and who answered. */
export function toWirePushAnswer(outcomes: readonly ApplyOutcome[], node: string): { outcomes: WireOutcome[]; held: HeldVersion[]; node: string } {
  return { ...toWireOutcomes(outcomes), node };
}

/**
 * The outcomes of a Set or Remove answer from `to`; UNAVAILABLE when another node answered. An
 * outcome an entry cannot have (unknown, or a touch's base-missing) reads as stale: no acknowledgement.
 */
export function fromWirePushAnswer(answer: { readonly outcomes: readonly WireOutcome[]; readonly held: readonly HeldVersion[]; readonly node: string; readonly abstains: boolean }, to: PeerRef): ApplyOutcome[] {
  checkAnswerer(answer.node, to);
  const outcomes = answer.outcomes.map((o, i): ApplyOutcome => {
    const held = answer.held[i];
    const r = fromWireOutcome(o, held);
    return r !== undefined && r.kind !== "base-missing" ? r : { kind: "stale", version: held ? toNumber(held.version) : 0, origin: held?.origin ?? "" };
  });
  return answer.abstains ? markAbstaining(outcomes) : outcomes;
}

export function toConsistency(level: ConsistencyLevel | undefined): Consistency {
  return level === "one" ? Consistency.ONE : level === "quorum" ? Consistency.QUORUM : level === "all" ? Consistency.ALL : Consistency.UNSPECIFIED;
}

export function fromConsistency(c: Consistency): ConsistencyLevel | undefined {
  return c === Consistency.ONE ? "one" : c === Consistency.QUORUM ? "quorum" : c === Consistency.ALL ? "all" : undefined;
}

/** A client write's kind as the peer contract numbers it (WriteKind). */
export const KIND_TO_WIRE: Readonly<Record<ClientWrite["kind"], WriteKind>> = Object.freeze({ set: WriteKind.SET, remove: WriteKind.REMOVE, touch: WriteKind.TOUCH, incr: WriteKind.INCR });

function toWireCondition(c: WriteCondition | undefined): Precondition | undefined {
  if (c === undefined) return undefined;
  return create(PreconditionSchema, {
    ifMatch: c.ifMatch === undefined || c.ifMatch === "*" ? [] : [...c.ifMatch],
    ifMatchAny: c.ifMatch === "*",
    ifNoneMatchAny: c.ifNoneMatch === "*",
  });
}

/** A wire precondition as a condition; undefined when it asks for nothing. */
function fromWireCondition(p: Precondition | undefined): WriteCondition | undefined {
  if (p === undefined) return undefined;
  const ifMatch = p.ifMatchAny ? "*" : p.ifMatch.length > 0 ? [...p.ifMatch] : undefined;
  const ifNoneMatch = p.ifNoneMatchAny ? "*" : undefined;
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  return { ...(ifMatch !== undefined ? { ifMatch } : {}), ...(ifNoneMatch !== undefined ? { ifNoneMatch } : {}) };
}

export function toWireWrite(w: ClientWrite): WireClientWrite {
  return create(ClientWriteSchema, {
    kind: KIND_TO_WIRE[w.kind],
    key: w.key,
    value: w.kind === "set" ? toBuffer(w.value) : new Uint8Array(0),
    ttlMs: BigInt(w.ttlMs),
    precondition: toWireCondition(w.condition),
    persist: w.persist === true,
    delta: BigInt(w.delta ?? 0),
    initial: BigInt(w.initial ?? 0),
    idempotencyKey: w.idempotencyKey ?? "",
    leaseToken: w.leaseToken ?? "",
    senderOwners: w.sender ? [...w.sender.owners] : [],
    senderBaseVersion: BigInt(w.sender?.baseVersion ?? 0),
    senderBaseOrigin: w.sender?.baseOrigin ?? "",
  });
}

/** WriteKind to internal kind; undefined for kinds this node does not know. */
function kindOf(k: WriteKind): ClientWrite["kind"] | undefined {
  return k === WriteKind.SET ? "set" : k === WriteKind.REMOVE ? "remove" : k === WriteKind.TOUCH ? "touch" : k === WriteKind.INCR ? "incr" : undefined;
}

/** A wire write, or undefined when its kind is unknown. */
export function fromWireWrite(w: WireClientWrite): ClientWrite | undefined {
  const kind = kindOf(w.kind);
  if (kind === undefined) return undefined;
  const condition = fromWireCondition(w.precondition);
  return {
    kind,
    key: w.key,
    value: kind === "set" ? fromBytes(w.value) : "",
    ttlMs: Math.max(0, toNumber(w.ttlMs)),
    ...(condition !== undefined ? { condition } : {}),
    ...(kind === "touch" && w.persist ? { persist: true } : {}),
    ...(kind === "incr" ? { delta: toNumber(w.delta), initial: toNumber(w.initial), ...(w.idempotencyKey !== "" ? { idempotencyKey: w.idempotencyKey } : {}) } : {}),
    ...(kind === "set" && w.leaseToken !== "" ? { leaseToken: w.leaseToken } : {}),
    ...(w.senderOwners.length > 0 ? { sender: { owners: w.senderOwners, baseVersion: toNumber(w.senderBaseVersion), baseOrigin: w.senderBaseOrigin } } : {}),
  };
}

/** A lease outcome as the wire answer of `node`. */
export function toWireLease(out: LeaseOutcome, node: string): LeaseResponse {
  switch (out.kind) {
    case "hit":
      return create(LeaseResponseSchema, { outcome: WireLeaseOutcome.HIT, entry: toEntry(out.record), node });
    case "granted":
      return create(LeaseResponseSchema, { outcome: WireLeaseOutcome.GRANTED, token: out.token, node });
    case "held":
      return create(LeaseResponseSchema, { outcome: WireLeaseOutcome.HELD, retryAfterMs: BigInt(Math.max(0, Math.ceil(out.retryAfterMs))), node });
    default:
      return create(LeaseResponseSchema, { outcome: WireLeaseOutcome.NONE, node });
  }
}

/** A wire lease answer from `to` (an unknown outcome, or a HIT without a record, is no lease). */
export function fromWireLease(r: LeaseResponse, to: PeerRef): LeaseOutcome {
  checkAnswerer(r.node, to);
  if (r.outcome === WireLeaseOutcome.HIT && r.entry !== undefined && !r.entry.tombstone) return { kind: "hit", record: fromEntry(r.entry) };
  if (r.outcome === WireLeaseOutcome.GRANTED && r.token !== "") return { kind: "granted", token: r.token };
  if (r.outcome === WireLeaseOutcome.HELD) return { kind: "held", retryAfterMs: Math.max(0, toNumber(r.retryAfterMs)) };
  return { kind: "none" };
}

/** Built as the plain object create() gives (every field set), without its reflection: one per forwarded write. */
export function toWireResult(r: WriteOutcome, node: string): WireWriteResult {
  return {
    $typeName: WriteResultSchema.typeName,
    key: r.key,
    applied: r.applied,
    bytes: BigInt(r.bytes),
    owners: [...r.owners],
    version: BigInt(r.version),
    origin: r.origin,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
    node,
    expiresAtUnixMs: BigInt(r.expiresAtMs),
    currentEtag: r.currentEtag ?? "",
    counterValue: BigInt(r.counterValue ?? 0),
    senderCounted: r.senderCounted === true,
    errorDetailsJson: r.errorDetails === undefined ? "" : JSON.stringify(r.errorDetails),
  };
}

/** Details relayed by a coordinator: a JSON object of at most ERROR_DETAILS_CHARS_MAX characters, else none. */
const ERROR_DETAILS_CHARS_MAX = 4096;
function errorDetailsOf(json: string): Record<string, unknown> | undefined {
  if (json === "" || json.length > ERROR_DETAILS_CHARS_MAX) return undefined;
  try {
    const v: unknown = JSON.parse(json);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function fromWireResult(r: WireWriteResult): WriteOutcome {
  const details = r.errorCode === "" ? undefined : errorDetailsOf(r.errorDetailsJson);
  return {
    key: r.key,
    applied: r.applied,
    bytes: toNumber(r.bytes),
    owners: r.owners,
    version: toNumber(r.version),
    origin: r.origin,
    errorCode: r.errorCode,
    errorMessage: r.errorMessage,
    expiresAtMs: toNumber(r.expiresAtUnixMs),
    ...(r.currentEtag !== "" ? { currentEtag: r.currentEtag } : {}),
    counterValue: toNumber(r.counterValue),
    ...(r.senderCounted ? { senderCounted: true } : {}),
    ...(details !== undefined ? { errorDetails: details } : {}),
  };
}

const STATE_TO_WIRE: Readonly<Record<PeerMemberState, MemberState>> = Object.freeze({
  alive: MemberState.ALIVE,
  suspect: MemberState.SUSPECT,
  dead: MemberState.DEAD,
});

export function toWireMember(m: PeerMember): Member {
  return create(MemberSchema, { id: m.id, address: m.address, state: STATE_TO_WIRE[m.state], incarnation: BigInt(m.incarnation), lastSeenUnixMs: BigInt(m.lastSeenMs), apiUrl: m.apiUrl ?? "", mgmtUrl: m.mgmtUrl ?? "", draining: m.draining ?? false, left: m.left ?? false });
}

/** Largest incarnation accepted from a peer: refuting it must stay a safe integer. */
const INCARNATION_MAX = BigInt(Number.MAX_SAFE_INTEGER) - 1n;

/** A wire member, or undefined when its state is unknown or its incarnation out of range. */
export function fromWireMember(m: Member): PeerMember | undefined {
  const state: PeerMemberState | undefined =
    m.state === MemberState.ALIVE ? "alive" : m.state === MemberState.SUSPECT ? "suspect" : m.state === MemberState.DEAD ? "dead" : undefined;
  if (!state || m.id === "" || m.incarnation > INCARNATION_MAX || m.incarnation < 0n) return undefined;
  return { id: m.id, address: m.address, state, incarnation: toNumber(m.incarnation), lastSeenMs: toNumber(m.lastSeenUnixMs), apiUrl: m.apiUrl, mgmtUrl: m.mgmtUrl, ...(m.draining ? { draining: true } : {}), ...(m.left ? { left: true } : {}) };
}

/** The writes of a ForwardRequest (unary and exchange alike); a write of no known kind is BAD_REQUEST. */
export function fromWireWrites(wire: readonly WireClientWrite[]): ClientWrite[] {
  return wire.map((w, i) => {
    const cw = fromWireWrite(w);
    if (!cw) throw badRequest(`write ${i} has no known kind (set, remove or touch)`);
    return cw;
  });
}

/** The Get answer of `node` for `keys`: `records` may answer only a prefix of them (size budget), the caller asks again. */
export function toGetResponse(node: string, keys: readonly string[], answers: readonly HeldRecord[]): GetResponse {
  return create(GetResponseSchema, {
    node,
    results: answers.map(({ record, counts }, i) => {
      const key = keys[i] as string;
      return create(GetResultSchema, record ? { key, found: true, entry: toEntry(record), abstains: !counts } : { key, found: false, abstains: !counts });
    }),
  });
}

/** A Get answer's results as held records (the answers of a node that predates `abstains` count). */
export function fromGetResponse(res: GetResponse): HeldRecord[] {
  return res.results.map((r) => ({ record: r.found && r.entry ? fromEntry(r.entry) : undefined, counts: !r.abstains }));
}
