// ConnectPeerTransport: the PeerTransport over the network. One client per remote node over
// one multiplexed HTTP/2 session, the peer bearer token on every call, gzip for request bodies
// above the compression threshold, 5 s call timeout, 16 MiB body cap both ways.
import { create } from "@bufbuild/protobuf";
import { createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import type { SecureClientSessionOptions } from "node:http2";
import { PEER_BODY_BYTES_MAX, PEER_IDLE_TIMEOUT_MS, PEER_TIMEOUT_MS } from "../core/limits.js";
import type { Metrics } from "../observability/index.js";
import type { VersionedRecord } from "../store/index.js";
import type { ForwardRequest, PeerMember, PeerRef, PeerTransport } from "../transport/index.js";
import {
  DrainRequestSchema,
  ForwardRequestSchema,
  GetRequestSchema,
  GossipRequestSchema,
  HealthRequestSchema,
  KeysRequestSchema,
  MerkleLeavesRequestSchema,
  MerkleRangeRequestSchema,
  MerkleRootRequestSchema,
  PeerService,
  ProbeRequestSchema,
  RemoveRequestSchema,
  SetRequestSchema,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import {
  fromEntry, fromWireMember, fromWireOutcome, fromWireResult, toConsistency, toDeletion, toEntry, toNumber, toWireMember, toWireWrite,
} from "./convert.js";
import { fromConnectError } from "./errors.js";
import { peerTokenSigner } from "./peer-auth.js";

export interface ConnectPeerTransportOptions {
  /** Bearer token sent on every call. */
  readonly token?: string;
  /** Request bodies larger than this are gzipped; 0 disables compression. */
  readonly compressionThresholdBytes: number;
  /** TLS client options (CA, certificate, key) for a peer transport with mutual TLS. */
  readonly tls?: Pick<SecureClientSessionOptions, "ca" | "cert" | "key">;
  readonly timeoutMs?: number;
  /** Counts dist.peer.calls and dist.peer.call_failures. */
  readonly metrics?: Metrics;
}

interface PeerClient {
  readonly client: Client<typeof PeerService>;
  readonly session: Http2SessionManager;
}

export class ConnectPeerTransport implements PeerTransport {
  private readonly clients = new Map<string, PeerClient>();
  private readonly interceptors: Interceptor[];
  /** RPCs sent so far. */
  calls = 0;

  constructor(private readonly opts: ConnectPeerTransportOptions) {
    this.interceptors = opts.token ? [peerTokenSigner(opts.token)] : [];
  }

  private client(to: PeerRef): Client<typeof PeerService> {
    let c = this.clients.get(to.address);
    if (!c) {
      const scheme = this.opts.tls ? "https" : "http";
      const baseUrl = `${scheme}://${to.address}/internal`;
      // noDelay: small HTTP/2 frames must not wait for Nagle's algorithm (40 ms with delayed ACKs).
      const session = new Http2SessionManager(
        baseUrl,
        { idleConnectionTimeoutMs: PEER_IDLE_TIMEOUT_MS, pingIntervalMs: 15_000, pingTimeoutMs: PEER_TIMEOUT_MS },
        { ...this.opts.tls, noDelay: true } as SecureClientSessionOptions,
      );
      const transport = createConnectTransport({
        httpVersion: "2",
        baseUrl,
        sessionManager: session,
        useBinaryFormat: true,
        interceptors: this.interceptors,
        sendCompression: this.opts.compressionThresholdBytes > 0 ? compressionGzip : undefined,
        compressMinBytes: this.opts.compressionThresholdBytes > 0 ? this.opts.compressionThresholdBytes : undefined,
        readMaxBytes: PEER_BODY_BYTES_MAX,
        writeMaxBytes: PEER_BODY_BYTES_MAX,
        defaultTimeoutMs: this.opts.timeoutMs ?? PEER_TIMEOUT_MS,
      });
      c = { client: createClient(PeerService, transport), session };
      this.clients.set(to.address, c);
    }
    return c.client;
  }

  private async call<T>(to: PeerRef, fn: (c: Client<typeof PeerService>) => Promise<T>): Promise<T> {
    this.calls++;
    this.opts.metrics?.inc("dist.peer.calls");
    try {
      return await fn(this.client(to));
    } catch (err) {
      this.opts.metrics?.inc("dist.peer.call_failures");
      throw fromConnectError(err);
    }
  }

  forward(to: PeerRef, req: ForwardRequest) {
    return this.call(to, async (c) => {
      const res = await c.forward(create(ForwardRequestSchema, { from: req.from, consistency: toConsistency(req.consistency), writes: req.writes.map(toWireWrite) }));
      return res.results.map(fromWireResult);
    });
  }
  set(to: PeerRef, from: string, records: readonly VersionedRecord[]) {
    return this.call(to, async (c) => (await c.set(create(SetRequestSchema, { from, entries: records.map(toEntry) }))).outcomes.map(fromWireOutcome));
  }
  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[]) {
    return this.call(to, async (c) => (await c.remove(create(RemoveRequestSchema, { from, deletions: tombstones.map(toDeletion) }))).outcomes.map(fromWireOutcome));
  }
  get(to: PeerRef, keys: readonly string[]) {
    return this.call(to, async (c) => {
      const res = await c.get(create(GetRequestSchema, { keys: [...keys] }));
      return res.results.map((r) => (r.found && r.entry ? fromEntry(r.entry) : undefined));
    });
  }
  keys(to: PeerRef, cursor: string, limit: number, q: string) {
    return this.call(to, async (c) => {
      const res = await c.keys(create(KeysRequestSchema, { cursor, limit, q }));
      return { keys: res.keys, nextCursor: res.nextCursor, truncated: res.truncated };
    });
  }
  health(to: PeerRef) {
    return this.call(to, async (c) => {
      const res = await c.health(create(HealthRequestSchema, {}));
      return { node: res.node, draining: res.draining, incarnation: toNumber(res.incarnation) };
    });
  }
  probe(relay: PeerRef, targetId: string) {
    return this.call(relay, async (c) => {
      const res = await c.probe(create(ProbeRequestSchema, { target: targetId }));
      return { target: res.target, ok: res.ok, error: res.error };
    });
  }
  gossip(to: PeerRef, from: string, members: readonly PeerMember[]) {
    return this.call(to, async (c) => {
      const res = await c.gossip(create(GossipRequestSchema, { from, members: members.map(toWireMember) }));
      return res.members.map(fromWireMember).filter((m): m is PeerMember => m !== undefined);
    });
  }
  merkleRoot(to: PeerRef, requester: string, leafCount: number) {
    return this.call(to, async (c) => {
      const res = await c.merkleRoot(create(MerkleRootRequestSchema, { requester, leafCount }));
      return { root: Buffer.from(res.root).toString("hex"), leafCount: res.leafCount, recordCount: toNumber(res.recordCount) };
    });
  }
  merkleLeaves(to: PeerRef, requester: string, leafCount: number) {
    return this.call(to, async (c) => (await c.merkleLeaves(create(MerkleLeavesRequestSchema, { requester, leafCount }))).leaves.map((l) => Buffer.from(l).toString("hex")));
  }
  merkleRange(to: PeerRef, requester: string, leafCount: number, leaves: readonly number[], cursor: string) {
    return this.call(to, async (c) => {
      const res = await c.merkleRange(create(MerkleRangeRequestSchema, { requester, leafCount, leaves: [...leaves], cursor }));
      return { records: res.entries.map(fromEntry), nextCursor: res.nextCursor };
    });
  }
  drain(to: PeerRef) {
    return this.call(to, async (c) => {
      await c.drain(create(DrainRequestSchema, {}));
    });
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) c.session.abort();
    this.clients.clear();
  }
}
