export type { PeerEndpoint, PeerTransport } from "./peer-transport.js";
export type {
  ApplyOutcome, ClientWrite, ForwardRequest, HealthInfo, KeysPage, LeaseOutcome, LeaseRequest, MerkleRangePage, MerkleRoot, PeerMember, PeerMemberState, PeerRef, ProbeResult, WriteCondition,
  WriteOutcome,
} from "./types.js";
export { isConditional, primaryOnly } from "./types.js";
export { InMemoryNetwork } from "./in-memory-transport.js";
export { Chaos, ChaosTransport } from "./chaos-transport.js";
