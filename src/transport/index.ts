export type { PeerEndpoint, PeerTransport } from "./peer-transport.js";
export type {
  ApplyOutcome, ClientWrite, ForwardRequest, HealthInfo, HeldRecord, KeysPage, MerkleRangePage, MerkleRoot, PeerMember, PeerMemberState, PeerRef, ProbeResult, OwnerChecks, RecordMeta, TouchOutcome, TouchPush, WriteCondition, WriteOutcome, LeaseOutcome, LeaseRelease, LeaseRequest,
} from "./types.js";
export { BASE_MISSING, isConditional, primaryOnly } from "./types.js";
export { anyAbstains, answeredAsOther, checkAnswerer, markAbstaining } from "./answers.js";
export { InMemoryNetwork } from "./in-memory-transport.js";
export { Chaos, ChaosTransport } from "./chaos-transport.js";
export { NotDeliveredError, neverDelivered, notDelivered } from "./delivery.js";
