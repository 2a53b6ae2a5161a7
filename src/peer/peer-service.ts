// The Connect service of the peer transport: decodes wire messages, calls the node's
// PeerEndpoint, encodes the answer. No data-path decisions are made here.
import { create } from "@bufbuild/protobuf";
import type { ConnectRouter, ServiceImpl } from "@connectrpc/connect";
import { CacheError, badRequest } from "../core/errors.js";
import { INSPECT_KEYS_MAX } from "../core/limits.js";
import type { PeerEndpoint } from "../transport/index.js";
import {
  DrainResponseSchema,
  GossipResponseSchema,
  HandOffHintsResponseSchema,
  HealthResponseSchema,
  InspectResponseSchema,
  KeysResponseSchema,
  MerkleLeavesResponseSchema,
  MerkleRangeResponseSchema,
  MerkleRootResponseSchema,
  PeerService,
  ProbeResponseSchema,
  ReleaseLeaseResponseSchema,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { fromEntry, fromWireMember, toEntry, toNumber, toRecordInfo, toWireLease, toWireMember } from "./convert.js";
import { toConnectError } from "./errors.js";
import { exchangeHandler } from "./exchange-server.js";
import { answerForward, answerGet, answerRemove, answerSet } from "./write-answers.js";
import { capItems, PEER_GOSSIP_MEMBERS_MAX, PEER_MERKLE_LEAVES_MAX } from "./call-caps.js";
import { RAW_EXCHANGE, serverFrames } from "./exchange-codec.js";
import { addReflectionRoutes, ReflectionAnswers } from "./reflection.js";

/** Wraps a handler so that every thrown error leaves as a ConnectError carrying our code. */
function guarded<A extends unknown[], R>(fn: (...args: A) => R | Promise<R>): (...args: A) => Promise<R> {
  return async (...args: A) => {
    try {
      return await fn(...args);
    } catch (err) {
      throw toConnectError(err);
    }
  };
}

function hexToBytes(hex: string): Uint8Array {
  return Buffer.from(hex, "hex");
}

export function peerServiceImpl(endpoint: PeerEndpoint): ServiceImpl<typeof PeerService> {
  return {
    forward: guarded((req) => answerForward(endpoint, req)),
    set: guarded((req) => answerSet(endpoint, req)),
    remove: guarded((req) => answerRemove(endpoint, req)),
    get: guarded((req) => answerGet(endpoint, req.keys)),
    keys: guarded((req) => {
      const page = endpoint.keysPage(req.cursor, req.limit, req.q);
      return create(KeysResponseSchema, { keys: page.keys, nextCursor: page.nextCursor, truncated: page.truncated });
    }),
    inspect: guarded((req) => {
      capItems("Inspect", "keys", req.keys.length, INSPECT_KEYS_MAX);
      const records = endpoint.inspectRecords(req.keys);
      return create(InspectResponseSchema, { node: endpoint.health().node, records: records.map(toRecordInfo) });
    }),
    probe: guarded(async (req) => {
      if (req.target === "") throw badRequest("target is required");
      const r = await endpoint.probe(req.target);
      return create(ProbeResponseSchema, { target: r.target, ok: r.ok, error: r.error });
    }),
    gossip: guarded((req) => {
      capItems("Gossip", "members", req.members.length, PEER_GOSSIP_MEMBERS_MAX);
      const members = endpoint.gossip(req.from, req.members.map(fromWireMember).filter((m) => m !== undefined));
      return create(GossipResponseSchema, { members: members.map(toWireMember), node: endpoint.health().node });
    }),
    merkleRoot: guarded(async (req) => {
      const r = await endpoint.merkleRoot(req.requester, req.leafCount, req.pulledThroughMs === undefined ? undefined : toNumber(req.pulledThroughMs));
      return create(MerkleRootResponseSchema, {
        root: hexToBytes(r.root),
        leafCount: r.leafCount,
        recordCount: BigInt(r.recordCount),
        asOfMs: BigInt(r.asOfMs),
        ...(r.requesterOnRing !== undefined ? { requesterOnRing: r.requesterOnRing } : {}),
      });
    }),
    merkleLeaves: guarded(async (req) => {
      const leaves = await endpoint.merkleLeaves(req.requester, req.leafCount);
      return create(MerkleLeavesResponseSchema, { leaves: leaves.map(hexToBytes) });
    }),
    merkleRange: guarded(async (req) => {
      capItems("MerkleRange", "leaves", req.leaves.length, PEER_MERKLE_LEAVES_MAX);
      const page = await endpoint.merkleRange(req.requester, req.leafCount, req.leaves, req.cursor);
      return create(MerkleRangeResponseSchema, { entries: page.records.map(toEntry), nextCursor: page.nextCursor });
    }),
    exchange: exchangeHandler(endpoint),
    drain: guarded(() => {
      endpoint.drain();
      return create(DrainResponseSchema, { draining: true });
    }),
    handOffHints: guarded((req) => {
      if (req.target === "") throw badRequest("target is required");
      capItems("HandOffHints", "entries", req.entries.length);
      const accepted = endpoint.acceptHandOff(req.from, { id: req.target, address: req.targetAddress }, req.entries.map(fromEntry));
      return create(HandOffHintsResponseSchema, { accepted, node: endpoint.health().node });
    }),
    lease: guarded(async (req) => {
      const out = await endpoint.lease({ from: req.from, key: req.key, leaseMs: toNumber(req.leaseMs), waitMs: toNumber(req.waitMs) });
      return toWireLease(out, endpoint.health().node);
    }),
    releaseLease: guarded((req) => {
      const released = endpoint.releaseLease({ from: req.from, key: req.key, token: req.token });
      return create(ReleaseLeaseResponseSchema, { released, node: endpoint.health().node });
    }),
    health: guarded((req) => {
      const h = endpoint.health();
      if (h.draining && req.unavailableWhenDraining) throw new CacheError("DRAINING", "node is draining");
      return create(HealthResponseSchema, { node: h.node, draining: h.draining, incarnation: BigInt(h.incarnation), unixMs: BigInt(Math.max(0, Math.floor(h.unixMs ?? 0))) });
    }),
  };
}

/**
 * The Exchange method alone, for binary streams: its frames are read with exchange-codec.ts
 * (peer-handler.ts sends binary Exchange requests here, everything else to createPeerRoutes).
 */
export function createBinaryExchangeRoutes(endpoint: PeerEndpoint): (router: ConnectRouter) => void {
  return (router) => {
    router.rpc(RAW_EXCHANGE, exchangeHandler(endpoint, serverFrames()));
  };
}

/** The Connect routes of the peer port: the peer service and gRPC server reflection. */
export function createPeerRoutes(endpoint: PeerEndpoint): (router: ConnectRouter) => void {
  const reflection = new ReflectionAnswers();
  return (router) => {
    router.service(PeerService, peerServiceImpl(endpoint));
    addReflectionRoutes(router, reflection);
  };
}
