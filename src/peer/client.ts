// ConnectPeerTransport: the PeerTransport over the network. One client per remote node over
// one multiplexed HTTP/2 session, the peer bearer token on every call, gzip for request bodies
// above the compression threshold, 5 s call timeout, 16 MiB body cap both ways.
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import type { SecureClientSessionOptions } from "node:http2";
import { systemClock, systemTimers, type Timers } from "../core/clock.js";
import { PEER_BODY_BYTES_MAX, PEER_IDLE_TIMEOUT_MS, PEER_TIMEOUT_MS } from "../core/limits.js";
import type { Metrics, PeerCallMetrics } from "../observability/index.js";
import type { VersionedRecord } from "../store/index.js";
import { peerGzip } from "./peer-compression.js";
import { checkAnswerer, type ClientWrite, type ForwardRequest, type LeaseRelease, type LeaseRequest, type OwnerChecks, type PeerMember, type PeerRef, type PeerTransport, type TouchPush, type WriteOutcome } from "../transport/index.js";
import {
  ClientWriteSchema,
  DrainRequestSchema,
  ForwardRequestSchema,
  GetRequestSchema,
  GossipRequestSchema,
  HandOffHintsRequestSchema,
  HealthRequestSchema,
  InspectRequestSchema,
  KeysRequestSchema,
  LeaseRequestSchema,
  MerkleLeavesRequestSchema,
  MerkleRangeRequestSchema,
  MerkleRootRequestSchema,
  PeerService,
  ProbeRequestSchema,
  ReleaseLeaseRequestSchema,
  RemoveRequestSchema,
  SetRequestSchema,
  type ExchangeRequest,
  type ExchangeResponse,
  type WriteResult as WireWriteResult,
} from "../../gen/proto/hypercache/peer/v1/peer_pb.js";
import { CacheError } from "../core/errors.js";
import {
  fromEntry, fromGetResponse, fromRecordInfo, fromWireMember, fromWirePushAnswer, fromWireResult, toConsistency, toEntry, toNumber, toWireMember, toWireWrite, fromWireLease,
} from "./convert.js";
import { toWireOwnerChecks } from "./owner-checks.js";
import { fromWireTouchAnswer, toWireTouch } from "./set-request.js";
import { fromConnectError, isRefusedStream } from "./errors.js";
import { ExchangeChannel } from "./exchange-channel.js";
import { clientBytesFrames, clientFrames, RAW_EXCHANGE_SERVICE } from "./exchange-codec.js";
import { http2ExchangeWire } from "./exchange-http2-wire.js";
import { peerTokenSigner } from "./peer-auth.js";
import { PeerSession } from "./peer-session.js";
import { installFastTextEncoding } from "./text-encoding.js";
import { WireEncoder } from "./wire-encode.js";

/** A write's bytes as the generated ClientWrite message (the writes wire-encode.ts does not encode). */
const encodeGeneratedWrite = (w: ClientWrite): Uint8Array => toBinary(ClientWriteSchema, toWireWrite(w));

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
  /** Records each call's duration and outcome per method and peer. */
  readonly callMetrics?: PeerCallMetrics;
  /** Monotonic ms, for call durations (the system clock by default). */
  readonly monotonicMs?: () => number;
  /** Subscribes to changes of the peer CA (livePeerTls): every session is then renewed. */
  readonly trustChanges?: (listener: () => void) => void;
  /** Timers for per-call timeouts on exchange streams (the process timers by default). */
  readonly timers?: Timers;
}

interface PeerClient {
  readonly client: Client<typeof PeerService>;
  readonly session: PeerSession;
  readonly channel: ExchangeCaller;
}

/** An exchange channel, whatever its frames. */
type ExchangeCaller = Pick<ExchangeChannel, "call" | "close" | "rotate" | "supported">;

export class ConnectPeerTransport implements PeerTransport {
  private readonly clients = new Map<string, PeerClient>();
  private readonly interceptors: Interceptor[];
  /** gzip for bodies above the threshold and for answers (inflated within the cap, peer-compression.ts). */
  private readonly gzip = peerGzip({ acceptCompressed: true });
  /** Encodes the writes and records of every call by hand (wire-encode.ts). */
  private readonly wire = new WireEncoder();
  /** RPCs sent so far. */
  calls = 0;

  constructor(private readonly opts: ConnectPeerTransportOptions) {
    this.interceptors = opts.token ? [peerTokenSigner(opts.token)] : [];
    installFastTextEncoding();
    opts.trustChanges?.(() => this.renewSessions());
  }

  /**
   * Every session moves to a new connection, its Exchange stream first, without cutting a call:
   * the peer CA changed, and a session verified under the old one must not outlive it.
   */
  renewSessions(): void {
    for (const c of this.clients.values()) {
      c.session.retire();
      c.channel.rotate();
    }
  }

  private peer(to: PeerRef): PeerClient {
    let c = this.clients.get(to.address);
    if (!c) {
      const scheme = this.opts.tls ? "https" : "http";
      const baseUrl = `${scheme}://${to.address}/internal`;
      // noDelay: small HTTP/2 frames must not wait for Nagle's algorithm (40 ms with delayed ACKs).
      const timers = this.opts.timers ?? systemTimers;
      const timeoutMs = this.opts.timeoutMs ?? PEER_TIMEOUT_MS;
      const session = new PeerSession(baseUrl, {
        timers,
        connectTimeoutMs: timeoutMs,
        idleTimeoutMs: PEER_IDLE_TIMEOUT_MS,
        // Read at each new connection: the TLS options may be reloaded (livePeerTls).
        connect: () => ({ ...this.opts.tls, noDelay: true }) as SecureClientSessionOptions,
      });
      const transport = createConnectTransport({
        httpVersion: "2",
        baseUrl,
        sessionManager: session,
        useBinaryFormat: true,
        interceptors: this.interceptors,
        sendCompression: this.opts.compressionThresholdBytes > 0 ? this.gzip : undefined,
        // Connect's default accepts gzip and brotli, so the peer gzipped every answer over 1 KiB
        // even with compression off (zlib in the replicas' profiles): answers follow the setting.
        acceptCompression: this.opts.compressionThresholdBytes > 0 ? [this.gzip] : [],
        compressMinBytes: this.opts.compressionThresholdBytes > 0 ? this.opts.compressionThresholdBytes : undefined,
        readMaxBytes: PEER_BODY_BYTES_MAX,
        writeMaxBytes: PEER_BODY_BYTES_MAX,
        defaultTimeoutMs: this.opts.timeoutMs ?? PEER_TIMEOUT_MS,
      });
      const client = createClient(PeerService, transport);
      const channel = this.exchangeChannel(baseUrl, transport, session, timers, timeoutMs);
      // A peer that sends GOAWAY (its peer CA changed, an idle close) ends the stream's connection.
      session.onGoaway(() => channel.rotate());
      c = { client, session, channel };
      this.clients.set(to.address, c);
    }
    return c;
  }

  /**
   * The exchange stream to a peer. Without compression it runs on a stream of the peer's session
   * that writes and reads the Connect envelopes itself (exchange-http2-wire.ts); with compression,
   * through Connect's client, which compresses each frame past the threshold. The frames are read
   * with exchange-codec.ts either way (the same bytes). No deadline on the stream itself: each
   * call has its own timeout. A call that times out means the connection may be dead (after a
   * partition its TCP retransmissions back off for minutes): the session and the stream are
   * dropped, and the next call starts afresh.
   */
  private exchangeChannel(baseUrl: string, transport: Transport, session: PeerSession, timers: Timers, timeoutMs: number): ExchangeCaller {
    const onStall = (activityAtSend: number) => {
      if (session.resetIfSilentSince(activityAtSend)) channel.close();
    };
    const reads = () => session.reads;
    const path = `${new URL(baseUrl).pathname}/${PeerService.typeName}/${PeerService.method.exchange.name}`;
    const viaConnect = this.opts.compressionThresholdBytes > 0 ? createClient(RAW_EXCHANGE_SERVICE, transport) : undefined;
    const channel: ExchangeCaller = viaConnect
      ? new ExchangeChannel({ open: (requests) => viaConnect.exchange(requests, { timeoutMs: 0 }), frames: clientFrames() }, timers, timeoutMs, onStall, reads)
      : new ExchangeChannel({ open: http2ExchangeWire(session, { path, token: this.opts.token, maxBytes: PEER_BODY_BYTES_MAX }), frames: clientBytesFrames() }, timers, timeoutMs, onStall, reads);
    return channel;
  }

  /**
   * A data-path call: a frame on the peer's exchange stream, or a unary call for a peer without
   * Exchange (detected on the first try, which is then repeated as a unary call).
   */
  private async exchangeOr<T>(
    to: PeerRef,
    method: string,
    call: ExchangeRequest["call"],
    pick: (r: ExchangeResponse) => T | undefined,
    unary: (c: Client<typeof PeerService>) => Promise<T>,
  ): Promise<T> {
    const peer = this.peer(to);
    if (!peer.channel.supported) return this.call(to, method, unary);
    this.calls++;
    this.opts.metrics?.inc("dist.peer.calls");
    const started = this.now();
    try {
      const r = await peer.channel.call(call);
      const out = pick(r);
      if (out === undefined) throw new CacheError("INTERNAL", `peer ${to.id} answered ${r.result.case ?? "nothing"} to ${call.case ?? "a call"}`);
      this.opts.callMetrics?.record(method, to.id, (this.now() - started) / 1000, true);
      return out;
    } catch (err) {
      if (!peer.channel.supported) return this.call(to, method, unary);
      this.opts.metrics?.inc("dist.peer.call_failures");
      this.opts.callMetrics?.record(method, to.id, (this.now() - started) / 1000, false);
      throw err;
    }
  }

  private now(): number {
    return (this.opts.monotonicMs ?? systemClock.monotonicMs)();
  }

  private async call<T>(to: PeerRef, method: string, fn: (c: Client<typeof PeerService>) => Promise<T>, attempt = 0): Promise<T> {
    // A call sent again after a refused stream counts once.
    if (attempt === 0) {
      this.calls++;
      this.opts.metrics?.inc("dist.peer.calls");
    }
    const peer = this.peer(to);
    const started = this.now();
    const readsBefore = peer.session.reads;
    try {
      const out = await fn(peer.client);
      this.opts.callMetrics?.record(method, to.id, (this.now() - started) / 1000, true);
      return out;
    } catch (err) {
      // Refused unprocessed (the peer's GOAWAY crossed it, say after its CA changed): sent again once.
      if (attempt === 0 && isRefusedStream(err)) return this.call(to, method, fn, 1);
      this.opts.metrics?.inc("dist.peer.call_failures");
      this.opts.callMetrics?.record(method, to.id, (this.now() - started) / 1000, false);
      // A call that timed out or failed on a connection that answered nothing meanwhile: the
      // connection may be dead. One that still carries answers (a slow Merkle call beside a busy
      // exchange stream) is kept, with the calls on it.
      if (err instanceof ConnectError && (err.code === Code.DeadlineExceeded || err.code === Code.Unavailable)) peer.session.resetIfSilentSince(readsBefore);
      throw fromConnectError(err);
    }
  }

  forward(to: PeerRef, req: ForwardRequest) {
    const msg = create(ForwardRequestSchema, {
      from: req.from,
      consistency: toConsistency(req.consistency),
      senderApplies: req.senderApplies ?? false,
      sentAtUnixMs: BigInt(req.sentAtMs ?? 0),
    });
    // Sets, removes and touches are encoded by hand, increments by the generated code (wire-encode.ts).
    msg.$unknown = req.writes.map((w) => this.wire.writeField(w, encodeGeneratedWrite));
    return this.exchangeOr(
      to,
      "Forward",
      { case: "forward", value: msg },
      (r) => (r.result.case === "forward" ? forwardResults(r.result.value.results, to) : undefined),
      async (c) => forwardResults((await c.forward(msg)).results, to),
    );
  }
  set(to: PeerRef, from: string, records: readonly VersionedRecord[], checks?: OwnerChecks) {
    // The entries are encoded by hand, once per record for every replica whose call is under way
    // (wire-encode.ts); forgotten when this call is over.
    const msg = create(SetRequestSchema, { from, ...toWireOwnerChecks(checks) });
    const done = () => this.wire.forgetEntries(records);
    try {
      msg.$unknown = records.map((r) => this.wire.entryField(r));
    } catch (err) {
      done();
      throw err;
    }
    return this.exchangeOr(
      to,
      "Set",
      { case: "set", value: msg },
      (r) => (r.result.case === "set" ? fromWirePushAnswer(r.result.value, to) : undefined),
      async (c) => fromWirePushAnswer(await c.set(msg), to),
    ).finally(done);
  }
  touch(to: PeerRef, from: string, touches: readonly TouchPush[]) {
    const msg = create(SetRequestSchema, { from, touches: touches.map(toWireTouch) });
    return this.exchangeOr(
      to,
      "Set",
      { case: "set", value: msg },
      (r) => (r.result.case === "set" ? fromWireTouchAnswer(r.result.value, touches.length, to) : undefined),
      async (c) => fromWireTouchAnswer(await c.set(msg), touches.length, to),
    );
  }
  remove(to: PeerRef, from: string, tombstones: readonly VersionedRecord[], checks?: OwnerChecks) {
    const msg = create(RemoveRequestSchema, { from, ...toWireOwnerChecks(checks) });
    msg.$unknown = tombstones.map((r) => this.wire.deletionField(r));
    return this.exchangeOr(
      to,
      "Remove",
      { case: "remove", value: msg },
      (r) => (r.result.case === "remove" ? fromWirePushAnswer(r.result.value, to) : undefined),
      async (c) => fromWirePushAnswer(await c.remove(msg), to),
    );
  }
  get(to: PeerRef, keys: readonly string[]) {
    const msg = create(GetRequestSchema, { keys: [...keys] });
    return this.exchangeOr(
      to,
      "Get",
      { case: "get", value: msg },
      (r) => (r.result.case === "get" ? fromGetResponse(r.result.value) : undefined),
      async (c) => fromGetResponse(await c.get(msg)),
    );
  }
  keys(to: PeerRef, cursor: string, limit: number, q: string) {
    return this.call(to, "Keys", async (c) => {
      const res = await c.keys(create(KeysRequestSchema, { cursor, limit, q }));
      return { keys: res.keys, nextCursor: res.nextCursor, truncated: res.truncated };
    });
  }
  inspect(to: PeerRef, keys: readonly string[], timeoutMs?: number) {
    return this.call(to, "Inspect", async (c) => {
      const res = await c.inspect(create(InspectRequestSchema, { keys: [...keys] }), timeoutMs !== undefined ? { timeoutMs } : undefined);
      checkAnswerer(res.node, to);
      if (res.records.length !== keys.length) throw new CacheError("UNAVAILABLE", `peer ${to.id} described ${res.records.length} of ${keys.length} keys`);
      return res.records.map(fromRecordInfo);
    });
  }
  health(to: PeerRef) {
    return this.call(to, "Health", async (c) => {
      const res = await c.health(create(HealthRequestSchema, {}));
      return { node: res.node, draining: res.draining, incarnation: toNumber(res.incarnation), unixMs: toNumber(res.unixMs) };
    });
  }
  probe(relay: PeerRef, targetId: string) {
    return this.call(relay, "Probe", async (c) => {
      const res = await c.probe(create(ProbeRequestSchema, { target: targetId }));
      return { target: res.target, ok: res.ok, error: res.error };
    });
  }
  gossip(to: PeerRef, from: string, members: readonly PeerMember[]) {
    return this.call(to, "Gossip", async (c) => {
      const res = await c.gossip(create(GossipRequestSchema, { from, members: members.map(toWireMember) }));
      checkAnswerer(res.node, to);
      return res.members.map(fromWireMember).filter((m): m is PeerMember => m !== undefined);
    });
  }
  merkleRoot(to: PeerRef, requester: string, leafCount: number, pulledThroughMs: number) {
    return this.call(to, "MerkleRoot", async (c) => {
      const res = await c.merkleRoot(create(MerkleRootRequestSchema, { requester, leafCount, pulledThroughMs: BigInt(pulledThroughMs) }));
      return {
        root: Buffer.from(res.root).toString("hex"),
        leafCount: res.leafCount,
        recordCount: toNumber(res.recordCount),
        asOfMs: toNumber(res.asOfMs),
        ...(res.requesterOnRing !== undefined ? { requesterOnRing: res.requesterOnRing } : {}),
      };
    });
  }
  merkleLeaves(to: PeerRef, requester: string, leafCount: number) {
    return this.call(to, "MerkleLeaves", async (c) => (await c.merkleLeaves(create(MerkleLeavesRequestSchema, { requester, leafCount }))).leaves.map((l) => Buffer.from(l).toString("hex")));
  }
  merkleRange(to: PeerRef, requester: string, leafCount: number, leaves: readonly number[], cursor: string) {
    return this.call(to, "MerkleRange", async (c) => {
      const res = await c.merkleRange(create(MerkleRangeRequestSchema, { requester, leafCount, leaves: [...leaves], cursor }));
      return { records: res.entries.map(fromEntry), nextCursor: res.nextCursor };
    });
  }
  drain(to: PeerRef) {
    return this.call(to, "Drain", async (c) => {
      await c.drain(create(DrainRequestSchema, {}));
    });
  }
  handOffHints(to: PeerRef, from: string, target: PeerRef, records: readonly VersionedRecord[]) {
    return this.call(to, "HandOffHints", async (c) => {
      const res = await c.handOffHints(create(HandOffHintsRequestSchema, { from, target: target.id, targetAddress: target.address, entries: records.map(toEntry) }));
      checkAnswerer(res.node, to);
      return records.map((_, i) => res.accepted[i] === true);
    });
  }

  lease(to: PeerRef, req: LeaseRequest) {
    // The primary may hold the answer for the whole wait: the call gets that on top of its timeout.
    const timeoutMs = (this.opts.timeoutMs ?? PEER_TIMEOUT_MS) + req.waitMs;
    return this.call(to, "Lease", async (c) => {
      const res = await c.lease(create(LeaseRequestSchema, { from: req.from, key: req.key, leaseMs: BigInt(req.leaseMs), waitMs: BigInt(req.waitMs) }), { timeoutMs });
      return fromWireLease(res, to);
    });
  }

  releaseLease(to: PeerRef, req: LeaseRelease) {
    return this.call(to, "ReleaseLease", async (c) => {
      const res = await c.releaseLease(create(ReleaseLeaseRequestSchema, { from: req.from, key: req.key, token: req.token }));
      checkAnswerer(res.node, to);
      return res.released;
    });
  }

  async close(): Promise<void> {
    for (const c of this.clients.values()) {
      c.channel.close();
      c.session.close();
    }
    this.clients.clear();
  }
}

/** The outcomes of a forward answered by `to` (each result names its coordinator). */
function forwardResults(results: readonly WireWriteResult[], to: PeerRef): WriteOutcome[] {
  for (const r of results) checkAnswerer(r.node, to);
  return results.map(fromWireResult);
}
